package awsemu_test

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/ec2"
	"github.com/joinerhq/joiner/awsemu/eks"
	"github.com/joinerhq/joiner/awsemu/iam"
	"github.com/joinerhq/joiner/awsemu/pricing"
	"github.com/joinerhq/joiner/awsemu/sqs"
	"github.com/joinerhq/joiner/awsemu/ssm"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/sts"
)

// The parameter contracts of every action the emulator serves: each rule the emulator checks
// (ranges, enums, required parameters, page sizes, filter names), with its source in the
// service's API reference, as a request that the real service accepts (code "") or refuses
// (its error code, and where known the words of its message). The ranges come from the API
// references' "Valid Range" and "Length Constraints" lines (the same constraints the services'
// published models carry); where a reference states no range, any value is accepted, as the
// service accepts it. Every row is sent as raw wire protocol (the query protocol's form, the JSON
// protocols' X-Amz-Target and body, EKS's REST paths) to a fresh emulator, so that the emulator's
// parsing is exercised as an SDK that sends other values would exercise it.
//
// TestContractsCoverEveryAction fails when an action a handler serves has no row: a new action
// comes with its contract.

// wireRequest is one raw request: a query-protocol form (service ec2, iam, sts), a JSON-protocol
// target and body (ssm, pricing, sqs) or a REST method and path with a JSON body (eks).
// "{name}" in any string is replaced by the fixture of that name (see fixtures).
type wireRequest struct {
	service      string
	form         []string // key, value, key, value...
	target       string
	method, path string
	body         string
}

func query(service, action string, kv ...string) wireRequest {
	return wireRequest{service: service, form: append([]string{"Action", action}, kv...)}
}

func jsonCall(service, target, body string) wireRequest {
	return wireRequest{service: service, target: target, body: body}
}

func restCall(method, path, body string) wireRequest {
	return wireRequest{service: "eks", method: method, path: path, body: body}
}

// answer is the emulator's response: its status and, for an error, the code and message.
type answer struct {
	status        int
	code, message string
	body          string
}

// contract is one rule of one action.
type contract struct {
	action string // service:Action
	rule   string // what is checked, in the reference's terms
	source string // the API reference page and the fact it states
	req    wireRequest
	code   string // "" when the service accepts the request, else the error code it answers
	msg    string // words of the service's message, when known
	check  func(t *testing.T, e *env, fx fixtures, a answer)
}

const (
	refEC2     = "EC2 API Reference, "
	refIAM     = "IAM API Reference, "
	refSSM     = "Systems Manager API Reference, "
	refPricing = "AWS Price List Service API Reference, "
	refSQS     = "SQS API Reference, "
	refSTS     = "STS API Reference, "
	refEKS     = "Amazon EKS API Reference, "
	// refFilters is the source of every Describe action's filter-name rule.
	refFilters = "the action's Filter.N list names the filters it supports; EC2 answers any other name with InvalidParameterValue \"The filter '...' is invalid\""
)

// pageOf asks for MaxResults n.
func pageOf(n int) []string { return []string{"MaxResults", fmt.Sprint(n)} }

func kv(pairs ...[]string) []string {
	var out []string
	for _, p := range pairs {
		out = append(out, p...)
	}
	return out
}

func contracts() []contract {
	var cs []contract
	add := func(c ...contract) { cs = append(cs, c...) }
	// ranged adds the rows of a MaxResults range lo..hi: lo and hi accepted, lo-1 and hi+1
	// refused with EC2's message.
	ranged := func(action string, lo, hi int, extra ...string) {
		src := refEC2 + action + ": MaxResults, Valid Range " + fmt.Sprint(lo) + " to " + fmt.Sprint(hi)
		for _, n := range []int{lo, hi} {
			add(contract{action: "ec2:" + action, rule: fmt.Sprintf("MaxResults %d accepted", n), source: src,
				req: query("ec2", action, kv(pageOf(n), extra)...)})
		}
		for _, n := range []int{lo - 1, hi + 1} {
			add(contract{action: "ec2:" + action, rule: fmt.Sprintf("MaxResults %d refused", n), source: src,
				req: query("ec2", action, kv(pageOf(n), extra)...), code: "InvalidParameterValue",
				msg: fmt.Sprintf("Parameter must be between %d and %d", lo, hi)})
		}
	}
	badFilter := func(action string, extra ...string) {
		add(contract{action: "ec2:" + action, rule: "unknown filter name refused", source: refEC2 + action + ": " + refFilters,
			req:  query("ec2", action, kv([]string{"Filter.1.Name", "no-such-filter", "Filter.1.Value.1", "x"}, extra)...),
			code: "InvalidParameterValue", msg: "The filter 'no-such-filter' is invalid"})
	}

	// EC2.
	ranged("DescribeInstanceTypes", 5, 100)
	badFilter("DescribeInstanceTypes")
	add(contract{action: "ec2:DescribeInstanceTypes", rule: "unknown InstanceType refused", source: refEC2 + "DescribeInstanceTypes: InstanceType.N names instance types; EC2 answers one it does not have with InvalidInstanceType",
		req: query("ec2", "DescribeInstanceTypes", "InstanceType.1", "m5.nope"), code: "InvalidInstanceType"})

	ranged("DescribeInstanceTypeOfferings", 5, 1000)
	badFilter("DescribeInstanceTypeOfferings")
	for _, lt := range []string{"region", "availability-zone", "availability-zone-id", "outpost"} {
		add(contract{action: "ec2:DescribeInstanceTypeOfferings", rule: "LocationType " + lt + " accepted",
			source: refEC2 + "DescribeInstanceTypeOfferings: LocationType, Valid Values region | availability-zone | availability-zone-id | outpost",
			req:    query("ec2", "DescribeInstanceTypeOfferings", "LocationType", lt)})
	}
	add(contract{action: "ec2:DescribeInstanceTypeOfferings", rule: "LocationType outside the enum refused",
		source: refEC2 + "DescribeInstanceTypeOfferings: LocationType, Valid Values region | availability-zone | availability-zone-id | outpost",
		req:    query("ec2", "DescribeInstanceTypeOfferings", "LocationType", "continent"), code: "InvalidParameterValue"})

	add(contract{action: "ec2:DescribeAvailabilityZones", rule: "no parameters: the region's zones", source: refEC2 + "DescribeAvailabilityZones: every parameter is optional",
		req: query("ec2", "DescribeAvailabilityZones")})
	badFilter("DescribeAvailabilityZones")

	spotSrc := refEC2 + "DescribeSpotPriceHistory: MaxResults is an Integer with no Valid Range; EC2 pages by it (upstream Karpenter sends 2000)"
	add(contract{action: "ec2:DescribeSpotPriceHistory", rule: "MaxResults 2000 accepted, pages of up to 2000 prices", source: spotSrc,
		req:   query("ec2", "DescribeSpotPriceHistory", kv(pageOf(2000), []string{"StartTime", "{dayAgo}", "ProductDescription.1", "Linux/UNIX"})...),
		check: spotPages(2000)})
	add(contract{action: "ec2:DescribeSpotPriceHistory", rule: "MaxResults 1 accepted, pages of one price", source: spotSrc,
		req: query("ec2", "DescribeSpotPriceHistory", kv(pageOf(1), []string{"InstanceType.1", "m5.large"})...), check: spotPages(1)})
	add(contract{action: "ec2:DescribeSpotPriceHistory", rule: "StartTime must be a timestamp", source: refEC2 + "DescribeSpotPriceHistory: StartTime is a Timestamp",
		req: query("ec2", "DescribeSpotPriceHistory", "StartTime", "yesterday"), code: "InvalidParameterValue"})
	badFilter("DescribeSpotPriceHistory")

	for _, a := range []string{"DescribeSubnets", "DescribeSecurityGroups", "DescribeVpcs"} {
		ranged(a, 5, 1000)
		badFilter(a)
	}
	add(contract{action: "ec2:DescribeSubnets", rule: "unknown SubnetId refused", source: refEC2 + "DescribeSubnets: an id that does not exist is InvalidSubnetID.NotFound (Error codes)",
		req: query("ec2", "DescribeSubnets", "SubnetId.1", "subnet-0000000000000000f"), code: "InvalidSubnetID.NotFound"})
	add(contract{action: "ec2:DescribeSecurityGroups", rule: "unknown GroupId refused", source: refEC2 + "DescribeSecurityGroups: an id that does not exist is InvalidGroup.NotFound (Error codes)",
		req: query("ec2", "DescribeSecurityGroups", "GroupId.1", "sg-0000000000000000f"), code: "InvalidGroup.NotFound"})
	add(contract{action: "ec2:DescribeVpcs", rule: "unknown VpcId refused", source: refEC2 + "DescribeVpcs: an id that does not exist is InvalidVpcID.NotFound (Error codes)",
		req: query("ec2", "DescribeVpcs", "VpcId.1", "vpc-0000000000000000f"), code: "InvalidVpcID.NotFound"})

	imagesSrc := refEC2 + "DescribeImages: MaxResults is an Integer with no Valid Range (upstream Karpenter sends 1000)"
	for _, n := range []int{1, 1000, 2000} {
		add(contract{action: "ec2:DescribeImages", rule: fmt.Sprintf("MaxResults %d accepted", n), source: imagesSrc,
			req: query("ec2", "DescribeImages", kv(pageOf(n), []string{"Owner.1", "amazon"})...)})
	}
	add(contract{action: "ec2:DescribeImages", rule: "unknown ImageId refused", source: refEC2 + "DescribeImages: an id that does not exist is InvalidAMIID.NotFound (Error codes)",
		req: query("ec2", "DescribeImages", "ImageId.1", "ami-0000000000000000f"), code: "InvalidAMIID.NotFound"})
	badFilter("DescribeImages")

	add(contract{action: "ec2:DeregisterImage", rule: "ImageId accepted", source: refEC2 + "DeregisterImage: ImageId, Required: Yes",
		req: query("ec2", "DeregisterImage", "ImageId", "{image}")})
	add(contract{action: "ec2:DeregisterImage", rule: "ImageId required", source: refEC2 + "DeregisterImage: ImageId, Required: Yes",
		req: query("ec2", "DeregisterImage"), code: "MissingParameter"})

	ltSrc := refEC2 + "CreateLaunchTemplate: LaunchTemplateName, Required: Yes, Length Constraints 3 to 128, Pattern [a-zA-Z0-9\\(\\)\\.\\-/_]+"
	add(contract{action: "ec2:CreateLaunchTemplate", rule: "name of 128 characters accepted", source: ltSrc,
		req: query("ec2", "CreateLaunchTemplate", "LaunchTemplateName", strings.Repeat("a", 128), "LaunchTemplateData.ImageId", "{image}")})
	add(contract{action: "ec2:CreateLaunchTemplate", rule: "LaunchTemplateName required", source: ltSrc,
		req: query("ec2", "CreateLaunchTemplate", "LaunchTemplateData.ImageId", "{image}"), code: "MissingParameter"})
	for _, name := range []string{"ab", strings.Repeat("a", 129), "has space"} {
		add(contract{action: "ec2:CreateLaunchTemplate", rule: fmt.Sprintf("name %.12q... refused", name), source: ltSrc,
			req:  query("ec2", "CreateLaunchTemplate", "LaunchTemplateName", name, "LaunchTemplateData.ImageId", "{image}"),
			code: "InvalidLaunchTemplateName.MalformedException"})
	}
	add(contract{action: "ec2:CreateLaunchTemplate", rule: "name in use refused", source: refEC2 + "CreateLaunchTemplate: a name already in use is InvalidLaunchTemplateName.AlreadyExistsException (Error codes)",
		req: query("ec2", "CreateLaunchTemplate", "LaunchTemplateName", "contract", "LaunchTemplateData.ImageId", "{image}"), code: "InvalidLaunchTemplateName.AlreadyExistsException"})

	ranged("DescribeLaunchTemplates", 1, 200)
	badFilter("DescribeLaunchTemplates")
	add(contract{action: "ec2:DescribeLaunchTemplates", rule: "unknown LaunchTemplateId refused", source: refEC2 + "DescribeLaunchTemplates: an id that does not exist is InvalidLaunchTemplateId.NotFound (Error codes)",
		req: query("ec2", "DescribeLaunchTemplates", "LaunchTemplateId.1", "lt-0000000000000000f"), code: "InvalidLaunchTemplateId.NotFound"})

	add(contract{action: "ec2:DeleteLaunchTemplate", rule: "LaunchTemplateName accepted", source: refEC2 + "DeleteLaunchTemplate: LaunchTemplateId or LaunchTemplateName, one of them",
		req: query("ec2", "DeleteLaunchTemplate", "LaunchTemplateName", "contract")})
	add(contract{action: "ec2:DeleteLaunchTemplate", rule: "LaunchTemplateId or LaunchTemplateName required", source: refEC2 + "DeleteLaunchTemplate: you must specify LaunchTemplateId or LaunchTemplateName",
		req: query("ec2", "DeleteLaunchTemplate"), code: "MissingParameter"})

	fleet := func(extra ...string) wireRequest {
		return query("ec2", "CreateFleet", kv([]string{"Type", "instant",
			"LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateId", "{lt}",
			"LaunchTemplateConfigs.1.LaunchTemplateSpecification.Version", "$Latest",
			"LaunchTemplateConfigs.1.Overrides.1.InstanceType", "m5.large", "LaunchTemplateConfigs.1.Overrides.1.SubnetId", "{subnet}",
			"TargetCapacitySpecification.TotalTargetCapacity", "1"}, extra)...)
	}
	fleetSrc := refEC2 + "CreateFleet: TargetCapacitySpecification and LaunchTemplateConfigs are Required; DefaultTargetCapacityType, Valid Values spot | on-demand | capacity-block"
	for _, ct := range []string{"on-demand", "spot"} {
		add(contract{action: "ec2:CreateFleet", rule: "instant fleet of " + ct + " accepted", source: fleetSrc,
			req: fleet("TargetCapacitySpecification.DefaultTargetCapacityType", ct)})
	}
	add(contract{action: "ec2:CreateFleet", rule: "DefaultTargetCapacityType outside the enum refused", source: fleetSrc,
		req: fleet("TargetCapacitySpecification.DefaultTargetCapacityType", "reserved"), code: "InvalidParameterValue"})
	add(contract{action: "ec2:CreateFleet", rule: "TotalTargetCapacity required", source: fleetSrc,
		req: query("ec2", "CreateFleet", "Type", "instant", "TargetCapacitySpecification.DefaultTargetCapacityType", "spot",
			"LaunchTemplateConfigs.1.LaunchTemplateSpecification.LaunchTemplateId", "{lt}"), code: "MissingParameter"})
	add(contract{action: "ec2:CreateFleet", rule: "LaunchTemplateConfigs required", source: fleetSrc,
		req: query("ec2", "CreateFleet", "Type", "instant", "TargetCapacitySpecification.DefaultTargetCapacityType", "spot",
			"TargetCapacitySpecification.TotalTargetCapacity", "1"), code: "MissingParameter"})

	runSrc := refEC2 + "RunInstances: MinCount and MaxCount are Required; MinCount at least 1 and at most MaxCount"
	run := func(min, max string) wireRequest {
		return query("ec2", "RunInstances", "ImageId", "{image}", "InstanceType", "m5.large", "SubnetId", "{subnet}", "MinCount", min, "MaxCount", max)
	}
	add(contract{action: "ec2:RunInstances", rule: "MinCount 1, MaxCount 2 accepted", source: runSrc, req: run("1", "2")})
	add(contract{action: "ec2:RunInstances", rule: "MinCount 0 refused", source: runSrc, req: run("0", "1"), code: "InvalidParameterValue"})
	add(contract{action: "ec2:RunInstances", rule: "MinCount above MaxCount refused", source: runSrc, req: run("2", "1"), code: "InvalidParameterValue"})

	// The reference's text for DescribeInstances and DescribeInstanceStatus said "This value can
	// be between 5 and 1000" until the pagination text replaced it; EC2 still refuses 1 with
	// "Parameter must be between 5 and 1000".
	ranged("DescribeInstances", 5, 1000)
	badFilter("DescribeInstances")
	ranged("DescribeInstanceStatus", 5, 1000)
	badFilter("DescribeInstanceStatus")
	add(contract{action: "ec2:DescribeInstanceStatus", rule: "filter event.code accepted (upstream Karpenter sends it)",
		source: refEC2 + "DescribeInstanceStatus: Filter.N lists event.code, event.description, event.instance-event-id, event.not-after, event.not-before, instance-status.reachability, system-status.reachability and others",
		req:    query("ec2", "DescribeInstanceStatus", "IncludeAllInstances", "true", "Filter.1.Name", "event.code", "Filter.1.Value.1", "instance-stop")})
	for _, a := range []string{"DescribeInstances", "DescribeInstanceStatus"} {
		add(contract{action: "ec2:" + a, rule: "InstanceId with MaxResults refused",
			source: refEC2 + a + ": MaxResults, you cannot specify this parameter and the instance IDs parameter in the same request",
			req:    query("ec2", a, "InstanceId.1", "{instance}", "MaxResults", "5"), code: "InvalidParameterCombination"})
		add(contract{action: "ec2:" + a, rule: "unknown InstanceId refused", source: refEC2 + a + ": an id that does not exist is InvalidInstanceID.NotFound (Error codes)",
			req: query("ec2", a, "InstanceId.1", "i-0000000000000000f"), code: "InvalidInstanceID.NotFound"})
	}

	add(contract{action: "ec2:TerminateInstances", rule: "InstanceId accepted", source: refEC2 + "TerminateInstances: InstanceId.N, Required: Yes",
		req: query("ec2", "TerminateInstances", "InstanceId.1", "{instance}")})
	add(contract{action: "ec2:TerminateInstances", rule: "InstanceId required", source: refEC2 + "TerminateInstances: InstanceId.N, Required: Yes",
		req: query("ec2", "TerminateInstances"), code: "MissingParameter"})

	tagSrc := refEC2 + "CreateTags: ResourceId.N and Tag.N, both Required: Yes"
	add(contract{action: "ec2:CreateTags", rule: "ResourceId and Tag accepted", source: tagSrc,
		req: query("ec2", "CreateTags", "ResourceId.1", "{instance}", "Tag.1.Key", "team", "Tag.1.Value", "a")})
	add(contract{action: "ec2:CreateTags", rule: "ResourceId required", source: tagSrc,
		req: query("ec2", "CreateTags", "Tag.1.Key", "team", "Tag.1.Value", "a"), code: "MissingParameter"})
	add(contract{action: "ec2:CreateTags", rule: "Tag required", source: tagSrc,
		req: query("ec2", "CreateTags", "ResourceId.1", "{instance}"), code: "MissingParameter"})

	add(contract{action: "ec2:GetConsoleOutput", rule: "InstanceId accepted", source: refEC2 + "GetConsoleOutput: InstanceId, Required: Yes",
		req: query("ec2", "GetConsoleOutput", "InstanceId", "{instance}")})
	add(contract{action: "ec2:GetConsoleOutput", rule: "InstanceId required", source: refEC2 + "GetConsoleOutput: InstanceId, Required: Yes",
		req: query("ec2", "GetConsoleOutput"), code: "MissingParameter"})

	ranged("DescribeCapacityReservations", 1, 1000)
	add(contract{action: "ec2:DescribeCapacityReservations", rule: "unknown filter name refused", source: refEC2 + "DescribeCapacityReservations: " + refFilters,
		req: query("ec2", "DescribeCapacityReservations", "Filter.1.Name", "no-such-filter", "Filter.1.Value.1", "x"), code: "InvalidParameterValue"})

	// IAM: names are required, of the reference's lengths and pattern [\w+=,.@-]+; MaxItems is
	// 1 to 1000 on every List action.
	iamName := func(action, key string, max int, extra ...string) {
		src := refIAM + action + fmt.Sprintf(": %s, Required: Yes, Length Constraints 1 to %d, Pattern [\\w+=,.@-]+", key, max)
		add(contract{action: "iam:" + action, rule: key + " required", source: src,
			req: query("iam", action, extra...), code: "ValidationError", msg: "Member must not be null"})
		add(contract{action: "iam:" + action, rule: fmt.Sprintf("%s longer than %d refused", key, max), source: src,
			req: query("iam", action, kv([]string{key, strings.Repeat("a", max+1)}, extra)...), code: "ValidationError",
			msg: fmt.Sprintf("Member must have length less than or equal to %d", max)})
		add(contract{action: "iam:" + action, rule: key + " outside the pattern refused", source: src,
			req: query("iam", action, kv([]string{key, "a/b"}, extra)...), code: "ValidationError"})
	}
	listed := func(action string, extra ...string) {
		src := refIAM + action + ": MaxItems, Valid Range 1 to 1000"
		add(contract{action: "iam:" + action, rule: "MaxItems 1000 accepted", source: src, req: query("iam", action, kv([]string{"MaxItems", "1000"}, extra)...)})
		add(contract{action: "iam:" + action, rule: "MaxItems 0 refused", source: src, req: query("iam", action, kv([]string{"MaxItems", "0"}, extra)...),
			code: "ValidationError", msg: "Member must have value greater than or equal to 1"})
		add(contract{action: "iam:" + action, rule: "MaxItems 1001 refused", source: src, req: query("iam", action, kv([]string{"MaxItems", "1001"}, extra)...),
			code: "ValidationError", msg: "Member must have value less than or equal to 1000"})
	}
	const role, profile = "JoinerControllerRole", "KarpenterNodeRole-demo"
	iamOK := func(action, rule string, kvs ...string) {
		add(contract{action: "iam:" + action, rule: rule, source: refIAM + action + ": the request parameters", req: query("iam", action, kvs...)})
	}
	iamOK("GetRole", "RoleName accepted", "RoleName", role)
	iamName("GetRole", "RoleName", 64)
	iamOK("GetInstanceProfile", "InstanceProfileName accepted", "InstanceProfileName", profile)
	iamName("GetInstanceProfile", "InstanceProfileName", 128)
	iamOK("CreateInstanceProfile", "InstanceProfileName accepted", "InstanceProfileName", "contract-profile")
	iamName("CreateInstanceProfile", "InstanceProfileName", 128)
	add(contract{action: "iam:CreateInstanceProfile", rule: "Path outside the pattern refused", source: refIAM + "CreateInstanceProfile: Path, Pattern (\\u002F)|(\\u002F[\\u0021-\\u007E]+\\u002F)",
		req: query("iam", "CreateInstanceProfile", "InstanceProfileName", "contract-profile", "Path", "no-slashes"), code: "ValidationError"})
	iamOK("DeleteInstanceProfile", "InstanceProfileName accepted", "InstanceProfileName", "{emptyProfile}")
	iamName("DeleteInstanceProfile", "InstanceProfileName", 128)
	iamOK("AddRoleToInstanceProfile", "names accepted", "InstanceProfileName", "{emptyProfile}", "RoleName", profile)
	iamName("AddRoleToInstanceProfile", "InstanceProfileName", 128, "RoleName", profile)
	iamName("AddRoleToInstanceProfile", "RoleName", 64, "InstanceProfileName", "{emptyProfile}")
	iamOK("RemoveRoleFromInstanceProfile", "names accepted", "InstanceProfileName", profile, "RoleName", profile)
	iamName("RemoveRoleFromInstanceProfile", "InstanceProfileName", 128, "RoleName", profile)
	iamName("RemoveRoleFromInstanceProfile", "RoleName", 64, "InstanceProfileName", profile)
	listed("ListInstanceProfiles")
	iamOK("TagInstanceProfile", "tags accepted", "InstanceProfileName", profile, "Tags.member.1.Key", "team", "Tags.member.1.Value", "a")
	iamName("TagInstanceProfile", "InstanceProfileName", 128, "Tags.member.1.Key", "team", "Tags.member.1.Value", "a")
	trust := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"ec2.amazonaws.com"},"Action":"sts:AssumeRole"}]}`
	iamOK("CreateRole", "RoleName of 64 characters accepted", "RoleName", strings.Repeat("r", 64), "AssumeRolePolicyDocument", trust)
	iamName("CreateRole", "RoleName", 64, "AssumeRolePolicyDocument", trust)
	add(contract{action: "iam:CreateRole", rule: "AssumeRolePolicyDocument required", source: refIAM + "CreateRole: AssumeRolePolicyDocument, Required: Yes",
		req: query("iam", "CreateRole", "RoleName", "contract-role"), code: "ValidationError", msg: "Member must not be null"})
	add(contract{action: "iam:CreateRole", rule: "Path outside the pattern refused", source: refIAM + "CreateRole: Path, Pattern (\\u002F)|(\\u002F[\\u0021-\\u007E]+\\u002F)",
		req: query("iam", "CreateRole", "RoleName", "contract-role", "AssumeRolePolicyDocument", trust, "Path", "no-slashes"), code: "ValidationError"})
	doc := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeImages","Resource":"*"}]}`
	iamOK("PutRolePolicy", "names and document accepted", "RoleName", role, "PolicyName", "contract", "PolicyDocument", doc)
	iamName("PutRolePolicy", "PolicyName", 128, "RoleName", role, "PolicyDocument", doc)
	add(contract{action: "iam:PutRolePolicy", rule: "PolicyDocument required", source: refIAM + "PutRolePolicy: PolicyDocument, Required: Yes",
		req: query("iam", "PutRolePolicy", "RoleName", role, "PolicyName", "contract"), code: "ValidationError", msg: "Member must not be null"})
	iamOK("GetRolePolicy", "names accepted", "RoleName", role, "PolicyName", "{rolePolicy}")
	iamName("GetRolePolicy", "PolicyName", 128, "RoleName", role)
	iamOK("DeleteRolePolicy", "names accepted", "RoleName", role, "PolicyName", "{rolePolicy}")
	iamName("DeleteRolePolicy", "PolicyName", 128, "RoleName", role)
	iamOK("ListRolePolicies", "RoleName accepted", "RoleName", role)
	iamName("ListRolePolicies", "RoleName", 64)
	listed("ListRolePolicies", "RoleName", role)
	worker := "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"
	iamOK("AttachRolePolicy", "PolicyArn accepted", "RoleName", role, "PolicyArn", worker)
	add(contract{action: "iam:AttachRolePolicy", rule: "PolicyArn required", source: refIAM + "AttachRolePolicy: PolicyArn, Required: Yes",
		req: query("iam", "AttachRolePolicy", "RoleName", role), code: "ValidationError", msg: "Member must not be null"})
	add(contract{action: "iam:AttachRolePolicy", rule: "PolicyArn not an ARN refused", source: refIAM + "AttachRolePolicy: PolicyArn is an ARN; IAM answers another string with InvalidInput",
		req: query("iam", "AttachRolePolicy", "RoleName", role, "PolicyArn", "AmazonEKSWorkerNodePolicy"), code: "InvalidInput"})
	iamName("AttachRolePolicy", "RoleName", 64, "PolicyArn", worker)
	iamOK("DetachRolePolicy", "PolicyArn accepted", "RoleName", "{attachedRole}", "PolicyArn", "{attachedPolicy}")
	add(contract{action: "iam:DetachRolePolicy", rule: "PolicyArn required", source: refIAM + "DetachRolePolicy: PolicyArn, Required: Yes",
		req: query("iam", "DetachRolePolicy", "RoleName", role), code: "ValidationError", msg: "Member must not be null"})
	iamOK("ListAttachedRolePolicies", "RoleName accepted", "RoleName", role)
	listed("ListAttachedRolePolicies", "RoleName", role)
	iamOK("ListRoles", "PathPrefix / accepted", "PathPrefix", "/")
	listed("ListRoles")
	add(contract{action: "iam:ListRoles", rule: "PathPrefix not starting with / refused", source: refIAM + "ListRoles: PathPrefix, Pattern \\u002F[\\u0021-\\u007F]*",
		req: query("iam", "ListRoles", "PathPrefix", "aws-reserved/"), code: "ValidationError"})
	add(contract{action: "iam:GetUser", rule: "UserName required of a role's session", source: refIAM + "GetUser: without UserName IAM describes the calling user; a role's session has none",
		req: query("iam", "GetUser"), code: "ValidationError"})
	add(contract{action: "iam:GetUser", rule: "unknown UserName is NoSuchEntity", source: refIAM + "GetUser: UserName, Length Constraints 1 to 128; an unknown user is NoSuchEntity",
		req: query("iam", "GetUser", "UserName", "nobody"), code: "NoSuchEntity"})
	iamOK("ListUsers", "no parameters accepted")
	listed("ListUsers")
	add(contract{action: "iam:ListAttachedUserPolicies", rule: "UserName required", source: refIAM + "ListAttachedUserPolicies: UserName, Required: Yes",
		req: query("iam", "ListAttachedUserPolicies"), code: "ValidationError", msg: "Member must not be null"})
	add(contract{action: "iam:ListAttachedUserPolicies", rule: "unknown UserName is NoSuchEntity", source: refIAM + "ListAttachedUserPolicies: an unknown user is NoSuchEntity",
		req: query("iam", "ListAttachedUserPolicies", "UserName", "nobody"), code: "NoSuchEntity"})

	// SSM.
	param := `/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/x86_64/standard/recommended/image_id`
	add(contract{action: "ssm:GetParameter", rule: "Name accepted", source: refSSM + "GetParameter: Name, Required: Yes, Length Constraints 1 to 2048",
		req: jsonCall("ssm", "AmazonSSM.GetParameter", `{"Name":"`+param+`"}`)})
	add(contract{action: "ssm:GetParameter", rule: "Name required", source: refSSM + "GetParameter: Name, Required: Yes",
		req: jsonCall("ssm", "AmazonSSM.GetParameter", `{}`), code: "ValidationException", msg: "Member must not be null"})
	add(contract{action: "ssm:GetParameter", rule: "Name longer than 2048 refused", source: refSSM + "GetParameter: Name, Length Constraints 1 to 2048",
		req: jsonCall("ssm", "AmazonSSM.GetParameter", `{"Name":"/`+strings.Repeat("a", 2048)+`"}`), code: "ValidationException"})
	ten := strings.TrimSuffix(strings.Repeat(`"`+param+`",`, 10), ",")
	add(contract{action: "ssm:GetParameters", rule: "10 Names accepted", source: refSSM + "GetParameters: Names, Required: Yes, 1 to 10 items",
		req: jsonCall("ssm", "AmazonSSM.GetParameters", `{"Names":[`+ten+`]}`)})
	add(contract{action: "ssm:GetParameters", rule: "11 Names refused", source: refSSM + "GetParameters: Names, 1 to 10 items",
		req: jsonCall("ssm", "AmazonSSM.GetParameters", `{"Names":[`+ten+`,"/x"]}`), code: "ValidationException", msg: "Member must have length less than or equal to 10"})
	add(contract{action: "ssm:GetParameters", rule: "Names required", source: refSSM + "GetParameters: Names, Required: Yes",
		req: jsonCall("ssm", "AmazonSSM.GetParameters", `{}`), code: "ValidationException", msg: "Member must not be null"})

	// Price List.
	products := func(extra string) wireRequest {
		return jsonCall("pricing", "AWSPriceListService.GetProducts", `{"ServiceCode":"AmazonEC2","FormatVersion":"aws_v1"`+extra+`}`)
	}
	prSrc := refPricing + "GetProducts: MaxResults, Valid Range 1 to 100"
	add(contract{action: "pricing:GetProducts", rule: "MaxResults 100 accepted", source: prSrc, req: products(`,"MaxResults":100`)})
	add(contract{action: "pricing:GetProducts", rule: "MaxResults 0 refused", source: prSrc, req: products(`,"MaxResults":0`),
		code: "ValidationException", msg: "Member must have value greater than or equal to 1"})
	add(contract{action: "pricing:GetProducts", rule: "MaxResults 101 refused", source: prSrc, req: products(`,"MaxResults":101`),
		code: "ValidationException", msg: "Member must have value less than or equal to 100"})
	add(contract{action: "pricing:GetProducts", rule: "productFamily filter matches (upstream Karpenter's query)",
		source: refPricing + "GetProducts: Filters match product attributes; productFamily is one (Compute Instance, Compute Instance (bare metal))",
		req:    products(`,"Filters":[{"Type":"TERM_MATCH","Field":"productFamily","Value":"Compute Instance (bare metal)"},{"Type":"TERM_MATCH","Field":"tenancy","Value":"Dedicated"}]`),
		check: func(t *testing.T, _ *env, _ fixtures, a answer) {
			if !strings.Contains(a.body, "metal") {
				t.Errorf("no bare metal price in %.300s", a.body)
			}
		}})
	add(contract{action: "pricing:GetProducts", rule: "ServiceCode required", source: refPricing + "GetProducts: ServiceCode, Required: Yes",
		req: jsonCall("pricing", "AWSPriceListService.GetProducts", `{}`), code: "ValidationException", msg: "Member must not be null"})
	add(contract{action: "pricing:GetProducts", rule: "more than 50 Filters refused", source: refPricing + "GetProducts: Filters, 0 to 50 items",
		req:  products(`,"Filters":[` + strings.TrimSuffix(strings.Repeat(`{"Type":"TERM_MATCH","Field":"regionCode","Value":"x"},`, 51), ",") + `]`),
		code: "ValidationException"})

	// SQS.
	add(contract{action: "sqs:GetQueueUrl", rule: "QueueName accepted", source: refSQS + "GetQueueUrl: QueueName, Required: Yes",
		req: jsonCall("sqs", "AmazonSQS.GetQueueUrl", `{"QueueName":"{queue}"}`)})
	add(contract{action: "sqs:GetQueueUrl", rule: "unknown QueueName refused", source: refSQS + "GetQueueUrl: a queue that does not exist is QueueDoesNotExist",
		req: jsonCall("sqs", "AmazonSQS.GetQueueUrl", `{"QueueName":"nope"}`), code: "QueueDoesNotExist"})
	add(contract{action: "sqs:SendMessage", rule: "MessageBody accepted", source: refSQS + "SendMessage: QueueUrl and MessageBody, Required: Yes",
		req: jsonCall("sqs", "AmazonSQS.SendMessage", `{"QueueUrl":"{queueURL}","MessageBody":"hello"}`)})
	recv := func(extra string) wireRequest {
		return jsonCall("sqs", "AmazonSQS.ReceiveMessage", `{"QueueUrl":"{queueURL}"`+extra+`}`)
	}
	rmSrc := refSQS + "ReceiveMessage: MaxNumberOfMessages 1 to 10, WaitTimeSeconds 0 to 20; VisibilityTimeout at most 43200 (12 hours)"
	add(contract{action: "sqs:ReceiveMessage", rule: "MaxNumberOfMessages 10, VisibilityTimeout 43200 accepted", source: rmSrc, req: recv(`,"MaxNumberOfMessages":10,"VisibilityTimeout":43200`)})
	add(contract{action: "sqs:ReceiveMessage", rule: "MaxNumberOfMessages 11 refused", source: rmSrc, req: recv(`,"MaxNumberOfMessages":11`),
		code: "InvalidParameterValue", msg: "Must be between 1 and 10, if provided."})
	add(contract{action: "sqs:ReceiveMessage", rule: "MaxNumberOfMessages 0 refused", source: rmSrc, req: recv(`,"MaxNumberOfMessages":0`),
		code: "InvalidParameterValue", msg: "Must be between 1 and 10, if provided."})
	add(contract{action: "sqs:ReceiveMessage", rule: "WaitTimeSeconds 21 refused", source: rmSrc, req: recv(`,"WaitTimeSeconds":21`),
		code: "InvalidParameterValue", msg: "Must be >= 0 and <= 20, if provided."})
	add(contract{action: "sqs:ReceiveMessage", rule: "VisibilityTimeout 43201 refused", source: rmSrc, req: recv(`,"VisibilityTimeout":43201`),
		code: "InvalidParameterValue"})
	add(contract{action: "sqs:DeleteMessage", rule: "a receipt handle accepted", source: refSQS + "DeleteMessage: QueueUrl and ReceiptHandle, Required: Yes",
		req: jsonCall("sqs", "AmazonSQS.DeleteMessage", `{"QueueUrl":"{queueURL}","ReceiptHandle":"rh-1-m-1"}`)})
	add(contract{action: "sqs:DeleteMessage", rule: "a malformed receipt handle refused", source: refSQS + "DeleteMessage: an invalid receipt handle is ReceiptHandleIsInvalid",
		req: jsonCall("sqs", "AmazonSQS.DeleteMessage", `{"QueueUrl":"{queueURL}","ReceiptHandle":"bogus"}`), code: "ReceiptHandleIsInvalid"})

	// STS.
	add(contract{action: "sts:GetCallerIdentity", rule: "no parameters accepted", source: refSTS + "GetCallerIdentity: no request parameters",
		req: query("sts", "GetCallerIdentity")})
	add(contract{action: "sts:DecodeAuthorizationMessage", rule: "EncodedMessage required", source: refSTS + "DecodeAuthorizationMessage: EncodedMessage, Required: Yes, Length Constraints 1 to 10240",
		req: query("sts", "DecodeAuthorizationMessage"), code: "ValidationError", msg: "Member must not be null"})
	add(contract{action: "sts:DecodeAuthorizationMessage", rule: "an unknown message is InvalidAuthorizationMessageException", source: refSTS + "DecodeAuthorizationMessage: a message that is not valid is InvalidAuthorizationMessageException",
		req: query("sts", "DecodeAuthorizationMessage", "EncodedMessage", "not-a-message"), code: "InvalidAuthorizationMessageException"})

	// EKS: every List action's maxResults is 1 to 100.
	const cl = "/clusters/demo"
	nodeRole := "arn%3Aaws%3Aiam%3A%3A{account}%3Arole%2FKarpenterNodeRole-demo"
	paged := func(action, path string) {
		src := refEKS + action + ": maxResults, Valid Range 1 to 100"
		add(contract{action: "eks:" + action, rule: "maxResults 100 accepted", source: src, req: restCall("GET", path+"?maxResults=100", "")})
		for _, n := range []string{"0", "101"} {
			add(contract{action: "eks:" + action, rule: "maxResults " + n + " refused", source: src, req: restCall("GET", path+"?maxResults="+n, ""),
				code: "InvalidParameterException"})
		}
	}
	add(contract{action: "eks:DescribeCluster", rule: "name accepted", source: refEKS + "DescribeCluster: name, Required: Yes",
		req: restCall("GET", cl, "")})
	add(contract{action: "eks:DescribeCluster", rule: "unknown cluster is ResourceNotFoundException", source: refEKS + "DescribeCluster: a cluster that does not exist is ResourceNotFoundException",
		req: restCall("GET", "/clusters/nope", ""), code: "ResourceNotFoundException"})
	add(contract{action: "eks:UpdateClusterConfig", rule: "accessConfig accepted", source: refEKS + "UpdateClusterConfig: accessConfig.authenticationMode, Valid Values API | API_AND_CONFIG_MAP | CONFIG_MAP",
		req: restCall("POST", cl+"/update-config", `{"accessConfig":{"authenticationMode":"API"}}`)})
	paged("ListAccessEntries", cl+"/access-entries")
	entry := `{"principalArn":"arn:aws:iam::{account}:role/contract-entry","type":"STANDARD"}`
	add(contract{action: "eks:CreateAccessEntry", rule: "principalArn accepted", source: refEKS + "CreateAccessEntry: principalArn, Required: Yes",
		req: restCall("POST", cl+"/access-entries", entry)})
	add(contract{action: "eks:CreateAccessEntry", rule: "principalArn required", source: refEKS + "CreateAccessEntry: principalArn, Required: Yes",
		req: restCall("POST", cl+"/access-entries", `{}`), code: "InvalidParameterException"})
	add(contract{action: "eks:CreateAccessEntry", rule: "type outside the list refused", source: refEKS + "CreateAccessEntry: type, one of STANDARD, EC2_LINUX, EC2_WINDOWS, FARGATE_LINUX, EC2, HYBRID_LINUX, HYPERPOD_LINUX",
		req: restCall("POST", cl+"/access-entries", `{"principalArn":"arn:aws:iam::{account}:role/JoinerControllerRole","type":"ROOT"}`), code: "InvalidParameterException"})
	add(contract{action: "eks:DescribeAccessEntry", rule: "principalArn accepted", source: refEKS + "DescribeAccessEntry: principalArn, Required: Yes",
		req: restCall("GET", cl+"/access-entries/"+nodeRole, "")})
	add(contract{action: "eks:UpdateAccessEntry", rule: "an EC2_LINUX entry accepts no change of groups", source: refEKS + "UpdateAccessEntry: kubernetesGroups and username apply to STANDARD entries only",
		req: restCall("POST", cl+"/access-entries/"+nodeRole, `{"kubernetesGroups":["ops"]}`), code: "InvalidParameterException"})
	add(contract{action: "eks:DeleteAccessEntry", rule: "principalArn accepted", source: refEKS + "DeleteAccessEntry: principalArn, Required: Yes",
		req: restCall("DELETE", cl+"/access-entries/"+nodeRole, "")})
	paged("ListAssociatedAccessPolicies", cl+"/access-entries/{adminEntry}/access-policies")
	scope := func(s string) string {
		return `{"policyArn":"arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy","accessScope":` + s + `}`
	}
	asSrc := refEKS + "AssociateAccessPolicy: accessScope.type, Valid Values cluster | namespace; namespaces only with namespace"
	add(contract{action: "eks:AssociateAccessPolicy", rule: "cluster scope accepted", source: asSrc,
		req: restCall("POST", cl+"/access-entries/{adminEntry}/access-policies", scope(`{"type":"cluster"}`))})
	add(contract{action: "eks:AssociateAccessPolicy", rule: "namespace scope without namespaces refused", source: asSrc,
		req: restCall("POST", cl+"/access-entries/{adminEntry}/access-policies", scope(`{"type":"namespace"}`)), code: "InvalidParameterException"})
	add(contract{action: "eks:AssociateAccessPolicy", rule: "scope type outside the enum refused", source: asSrc,
		req: restCall("POST", cl+"/access-entries/{adminEntry}/access-policies", scope(`{"type":"region"}`)), code: "InvalidParameterException"})
	add(contract{action: "eks:DisassociateAccessPolicy", rule: "an unassociated policy is ResourceNotFoundException", source: refEKS + "DisassociateAccessPolicy: policyArn, Required: Yes",
		req: restCall("DELETE", cl+"/access-entries/{adminEntry}/access-policies/arn%3Aaws%3Aeks%3A%3Aaws%3Acluster-access-policy%2FAmazonEKSEditPolicy", ""), code: "ResourceNotFoundException"})
	paged("ListPodIdentityAssociations", cl+"/pod-identity-associations")
	add(contract{action: "eks:DescribePodIdentityAssociation", rule: "an unknown association id is ResourceNotFoundException", source: refEKS + "DescribePodIdentityAssociation: associationId, Required: Yes",
		req: restCall("GET", cl+"/pod-identity-associations/a-0000000000000000f", ""), code: "ResourceNotFoundException"})
	paged("ListAccessPolicies", "/access-policies")
	return cs
}

// spotPages checks that the prices come in pages of at most n, with a NextToken on every page but
// the last, and that following the tokens ends.
func spotPages(n int) func(t *testing.T, e *env, fx fixtures, a answer) {
	return func(t *testing.T, e *env, fx fixtures, a answer) {
		t.Helper()
		items := regexp.MustCompile(`<item>`)
		token := regexp.MustCompile(`<nextToken>([^<]+)</nextToken>`)
		seen := 0
		for page := 0; ; page++ {
			got := len(items.FindAllString(a.body, -1))
			if got > n || got == 0 {
				t.Fatalf("page %d holds %d prices, want 1 to %d", page, got, n)
			}
			seen += got
			m := token.FindStringSubmatch(a.body)
			if m == nil {
				break
			}
			if got != n {
				t.Fatalf("page %d holds %d prices and a NextToken, want a full page of %d", page, got, n)
			}
			if page > 50 {
				t.Fatal("more than 50 pages")
			}
			next := query("ec2", "DescribeSpotPriceHistory", "MaxResults", fmt.Sprint(n), "NextToken", m[1],
				"StartTime", "{dayAgo}", "ProductDescription.1", "Linux/UNIX")
			if n == 1 {
				next = query("ec2", "DescribeSpotPriceHistory", "MaxResults", "1", "NextToken", m[1], "InstanceType.1", "m5.large")
			}
			if a = e.send(t, next, fx); a.status != http.StatusOK {
				t.Fatalf("page %d: %d %s %s", page+1, a.status, a.code, a.message)
			}
		}
		if seen <= n && n > 1 {
			t.Errorf("%d prices in all: the test wants more than one page of %d", seen, n)
		}
	}
}

// fixtures are the names a row's request may use, made in its fresh emulator.
type fixtures map[string]string

func (fx fixtures) expand(s string) string {
	for k, v := range fx {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

// newFixtures makes the resources rows refer to: a launch template named "contract", an
// instance, an instance profile without a role, an inline policy and an attached managed policy
// on the controller role, and an access entry of type STANDARD.
func newFixtures(t *testing.T, e *env) fixtures {
	t.Helper()
	fx := fixtures{"queue": "demo", "account": "", "dayAgo": t0.Add(-24 * 3600e9).Format("2006-01-02T15:04:05Z")}
	e.state.View(func(w *state.World) {
		fx["account"] = w.AccountID
		r := w.Regions[e.region]
		fx["subnet"] = state.SortedKeys(r.Subnets)[0]
		for _, id := range state.SortedKeys(r.Images) {
			img := r.Images[id]
			if img.OwnerID == state.EKSAMIOwner && img.Architecture == "x86_64" && img.Family == state.FamilyAL2023 && img.Variant == "standard" {
				fx["image"], fx["k8s"] = id, img.KubernetesVersion
			}
		}
	})
	fx["queueURL"] = e.url + "/" + fx["account"] + "/demo"
	must := func(r wireRequest) answer {
		t.Helper()
		a := e.send(t, r, fx)
		if a.status != http.StatusOK {
			t.Fatalf("fixture %s %s: %d %s %s", r.service, r.form, a.status, a.code, a.message)
		}
		return a
	}
	id := regexp.MustCompile(`<(launchTemplateId|instanceId)>([^<]+)<`)
	fx["lt"] = id.FindStringSubmatch(must(query("ec2", "CreateLaunchTemplate", "LaunchTemplateName", "contract",
		"LaunchTemplateData.ImageId", "{image}", "LaunchTemplateData.IamInstanceProfile.Name", "KarpenterNodeRole-demo")).body)[2]
	fx["instance"] = id.FindStringSubmatch(must(query("ec2", "RunInstances", "ImageId", "{image}", "InstanceType", "m5.large",
		"SubnetId", "{subnet}", "MinCount", "1", "MaxCount", "1")).body)[2]
	fx["emptyProfile"] = "contract-empty"
	must(query("iam", "CreateInstanceProfile", "InstanceProfileName", "contract-empty"))
	fx["rolePolicy"] = "contract-inline"
	must(query("iam", "PutRolePolicy", "RoleName", "JoinerControllerRole", "PolicyName", "contract-inline",
		"PolicyDocument", `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:DescribeVpcs","Resource":"*"}]}`))
	fx["attachedRole"], fx["attachedPolicy"] = "KarpenterNodeRole-demo", "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"
	must(query("iam", "AttachRolePolicy", "RoleName", "KarpenterNodeRole-demo", "PolicyArn", "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy"))
	fx["adminEntry"] = url.PathEscape("arn:aws:iam::" + fx["account"] + ":role/JoinerControllerRole")
	must(restCall("POST", "/clusters/demo/access-entries", `{"principalArn":"arn:aws:iam::{account}:role/JoinerControllerRole","type":"STANDARD"}`))
	// CreateAccessEntry's accepted row creates an entry for another role.
	must(query("iam", "CreateRole", "RoleName", "contract-entry", "AssumeRolePolicyDocument",
		`{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::`+fx["account"]+`:root"},"Action":"sts:AssumeRole"}]}`))
	return fx
}

// send sends r, signed as the administrator (whom every policy allows, so that a row meets the
// parameter checks and not authorization), and reads the answer.
func (e *env) send(t *testing.T, r wireRequest, fx fixtures) answer {
	t.Helper()
	var req *http.Request
	var err error
	switch {
	case r.form != nil:
		form := url.Values{}
		for i := 0; i+1 < len(r.form); i += 2 {
			form.Add(r.form[i], fx.expand(r.form[i+1]))
		}
		if r.service == "ec2" {
			form.Set("Version", "2016-11-15")
		}
		req, err = http.NewRequest(http.MethodPost, e.url+"/", strings.NewReader(form.Encode()))
		if err == nil {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		}
	case r.target != "":
		req, err = http.NewRequest(http.MethodPost, e.url+"/", strings.NewReader(fx.expand(r.body)))
		if err == nil {
			req.Header.Set("X-Amz-Target", r.target)
			req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		}
	default:
		var body io.Reader
		if r.body != "" {
			body = strings.NewReader(fx.expand(r.body))
		}
		req, err = http.NewRequest(r.method, e.url+fx.expand(r.path), body)
		if err == nil && body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", fmt.Sprintf("AWS4-HMAC-SHA256 Credential=%s/20260301/%s/%s/aws4_request, SignedHeaders=host, Signature=0",
		authz.AdminAccessKey, e.region, r.service))
	status, raw := send(t, req)
	a := answer{status: status, body: string(raw)}
	if a.status == http.StatusOK {
		return a
	}
	var j struct {
		Type    string `json:"__type"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &j) == nil {
		a.code, a.message = j.Type, j.Message
		return a
	}
	if m := regexp.MustCompile(`<Code>([^<]*)</Code>`).FindStringSubmatch(a.body); m != nil {
		a.code = m[1]
	}
	if m := regexp.MustCompile(`<Message>([^<]*)</Message>`).FindStringSubmatch(a.body); m != nil {
		a.message = html.UnescapeString(m[1])
	}
	return a
}

func TestParameterContracts(t *testing.T) {
	for _, c := range contracts() {
		t.Run(c.action+"/"+c.rule, func(t *testing.T) {
			t.Parallel()
			if c.source == "" {
				t.Fatal("a contract names its source")
			}
			e := newEnv(t)
			fx := newFixtures(t, e)
			a := e.send(t, c.req, fx)
			switch {
			case c.code == "" && a.status != http.StatusOK:
				t.Fatalf("refused with %d %s: %s; the service accepts it (%s)", a.status, a.code, a.message, c.source)
			case c.code != "" && a.code != c.code:
				t.Fatalf("answered %d %s %q, want %s (%s)", a.status, a.code, a.message, c.code, c.source)
			case c.msg != "" && !strings.Contains(a.message, c.msg):
				t.Errorf("message %q, want it to say %q", a.message, c.msg)
			}
			if c.check != nil {
				c.check(t, e, fx, a)
			}
		})
	}
}

// TestContractsCoverEveryAction fails for an action a handler serves without a contract, and
// for a contract of an action no handler serves.
func TestContractsCoverEveryAction(t *testing.T) {
	served := map[string][]string{
		"ec2": ec2.Actions(), "iam": iam.Actions(), "sts": sts.Actions(), "ssm": ssm.Actions(),
		"pricing": pricing.Actions(), "sqs": sqs.Actions(), "eks": eks.Actions(),
	}
	covered := map[string]bool{}
	for _, c := range contracts() {
		covered[c.action] = true
		service, action, _ := strings.Cut(c.action, ":")
		if !slices.Contains(served[service], action) {
			t.Errorf("contract %q: %s serves no %s", c.rule, service, action)
		}
	}
	for service, actions := range served {
		if len(actions) == 0 {
			t.Errorf("%s serves no action", service)
		}
		for _, a := range actions {
			if !covered[service+":"+a] {
				t.Errorf("%s:%s has no contract: add its rules, with their sources, to contracts()", service, a)
			}
		}
	}
}
