package apilimits

import (
	"strings"
)

// Bucket is one published token bucket: Capacity tokens at most, RefillPerSecond tokens added
// back every second. Name identifies the bucket within one account and Region: two actions that
// share a bucket (SSM's Parameter Store throughput) return the same Name, two actions of one
// category that AWS meters separately (every EC2 action has its own bucket: "Limits are applied
// to individual API actions, not API action categories") return different ones. Source names
// the AWS page the numbers come from.
type Bucket struct {
	Name            string
	Capacity        float64
	RefillPerSecond float64
	Source          string
}

// The pages the numbers come from.
const (
	// EC2Source: request and resource token buckets, per account and Region.
	EC2Source = `"Request throttling for the Amazon EC2 API", https://docs.aws.amazon.com/ec2/latest/devguide/ec2-api-throttling.html`
	// SSMSource: Parameter Store's default maximum throughput, 40 transactions per second shared
	// by GetParameter, GetParameters and GetParametersByPath.
	SSMSource = `"AWS Systems Manager endpoints and quotas" (Parameter Store, max throughput), https://docs.aws.amazon.com/general/latest/gr/ssm.html`
	// PricingSource: the Price List Query API's token buckets, per account and Region.
	PricingSource = `"Using the AWS Price List Query API" (Quotas), https://docs.aws.amazon.com/awsaccountbilling/latest/aboutv2/using-pelong.html`
)

// Category is the EC2 request-rate category of an action, as the EC2 throttling page groups them.
type Category string

// The EC2 categories. ConsoleNonMutating is for requests the EC2 console makes; no API client is
// in it, so EC2Category never returns it.
const (
	NonMutating           Category = "non-mutating"
	UnfilteredNonMutating Category = "unfiltered-and-unpaginated-non-mutating"
	Mutating              Category = "mutating"
	ResourceIntensive     Category = "resource-intensive"
	ConsoleNonMutating    Category = "console-non-mutating"
	Uncategorized         Category = "uncategorized"
)

// categories are the sizes and refill rates of the page's "Request token bucket sizes and refill
// rates" table; Uncategorized actions have their own (ec2Uncategorized).
var categories = map[Category]rate{
	NonMutating:           {100, 20},
	UnfilteredNonMutating: {50, 10},
	Mutating:              {50, 5},
	ResourceIntensive:     {50, 5},
	ConsoleNonMutating:    {100, 10},
}

// CategoryCapacity returns the bucket size and refill rate the EC2 page gives a category; ok is
// false for Uncategorized (each such action has its own numbers) and unknown categories.
func CategoryCapacity(c Category) (capacity, refillPerSecond float64, ok bool) {
	r, ok := categories[c]
	return r.capacity, r.refill, ok
}

// ec2Unfiltered are the non-mutating actions that draw from the smaller "unfiltered and
// unpaginated" bucket when called with neither a filter nor pagination.
var ec2Unfiltered = map[string]bool{
	"DescribeInstances":            true,
	"DescribeInstanceStatus":       true,
	"DescribeNetworkInterfaces":    true,
	"DescribeSecurityGroups":       true,
	"DescribeSnapshots":            true,
	"DescribeSpotInstanceRequests": true,
	"DescribeVolumes":              true,
}

// ec2ResourceIntensive are the mutating actions of the "resource-intensive" category.
var ec2ResourceIntensive = map[string]bool{
	"AcceptVpcPeeringConnection":    true,
	"AuthorizeSecurityGroupIngress": true,
	"CancelSpotInstanceRequests":    true,
	"CreateKeyPair":                 true,
	"CreateVpcPeeringConnection":    true,
	"DeleteVpcPeeringConnection":    true,
	"RejectVpcPeeringConnection":    true,
	"RevokeSecurityGroupIngress":    true,
	"RequestSpotInstances":          true,
}

// rate is a capacity and refill rate of the page's tables.
type rate struct{ capacity, refill float64 }

// ec2Uncategorized is the page's "Uncategorized actions" table: actions with their own sizes.
var ec2Uncategorized = map[string]rate{
	"AcceptVpcEndpointConnections":                        {10, 1},
	"AdvertiseByoipCidr":                                  {1, 0.1},
	"AssignIpv6Addresses":                                 {100, 5},
	"AssignPrivateIpAddresses":                            {100, 5},
	"AssignPrivateNatGatewayAddress":                      {10, 1},
	"AssociateCapacityReservationBillingOwner":            {1, 0.5},
	"AssociateEnclaveCertificateIamRole":                  {10, 1},
	"AssociateIamInstanceProfile":                         {100, 5},
	"AssociateNatGatewayAddress":                          {10, 1},
	"AttachVerifiedAccessTrustProvider":                   {10, 2},
	"AuthorizeClientVpnIngress":                           {5, 2},
	"CancelDeclarativePoliciesReport":                     {1, 1},
	"CopyImage":                                           {100, 1},
	"CreateClientVpnRoute":                                {5, 2},
	"CreateCoipCidr":                                      {5, 1},
	"CreateCoipPool":                                      {5, 1},
	"CreateDefaultSubnet":                                 {1, 1},
	"CreateDefaultVpc":                                    {1, 1},
	"CreateLaunchTemplateVersion":                         {100, 5},
	"CreateNatGateway":                                    {10, 1},
	"CreateNetworkInterface":                              {100, 5},
	"CreateRestoreImageTask":                              {50, 0.1},
	"CreateSnapshot":                                      {100, 5},
	"CreateSnapshots":                                     {100, 5},
	"CreateSpotDatafeedSubscription":                      {50, 3},
	"CreateStoreImageTask":                                {50, 0.1},
	"CreateSubnetCidrReservation":                         {5, 1},
	"CreateTags":                                          {100, 10},
	"CreateVerifiedAccessEndpoint":                        {20, 4},
	"CreateVerifiedAccessGroup":                           {10, 2},
	"CreateVerifiedAccessInstance":                        {10, 2},
	"CreateVerifiedAccessTrustProvider":                   {10, 2},
	"CreateVolume":                                        {100, 5},
	"CreateVpcEndpoint":                                   {4, 0.3},
	"CreateVpcEndpointServiceConfiguration":               {10, 1},
	"DeleteClientVpnRoute":                                {5, 2},
	"DeleteCoipCidr":                                      {5, 1},
	"DeleteCoipPool":                                      {5, 1},
	"DeleteCoipPoolPermission":                            {5, 1},
	"DeleteNatGateway":                                    {10, 1},
	"DeleteNetworkInterface":                              {100, 5},
	"DeleteSnapshot":                                      {100, 5},
	"DeleteSpotDatafeedSubscription":                      {50, 3},
	"DeleteSubnetCidrReservation":                         {5, 1},
	"DeleteQueuedReservedInstances":                       {5, 5},
	"DeleteTags":                                          {100, 10},
	"DeleteVerifiedAccessEndpoint":                        {20, 4},
	"DeleteVerifiedAccessGroup":                           {10, 2},
	"DeleteVerifiedAccessInstance":                        {10, 2},
	"DeleteVerifiedAccessTrustProvider":                   {10, 2},
	"DeleteVolume":                                        {100, 5},
	"DeleteVpcEndpoints":                                  {4, 0.3},
	"DeleteVpcEndpointServiceConfigurations":              {10, 1},
	"DeprovisionByoipCidr":                                {1, 0.1},
	"DeregisterImage":                                     {100, 5},
	"DescribeAggregateIdFormat":                           {10, 10},
	"DescribeByoipCidrs":                                  {1, 0.5},
	"DescribeCapacityBlockExtensionOfferings":             {10, 0.15},
	"DescribeCapacityBlockOfferings":                      {10, 0.15},
	"DescribeDeclarativePoliciesReports":                  {5, 5},
	"DescribeHostReservations":                            {5, 2},
	"DescribeHostReservationOfferings":                    {5, 2},
	"DescribeIdentityIdFormat":                            {10, 10},
	"DescribeIdFormat":                                    {10, 10},
	"DescribeInstanceTopology":                            {1, 1},
	"DescribeMovingAddresses":                             {1, 1},
	"DescribePrincipalIdFormat":                           {10, 10},
	"DescribeReservedInstancesOfferings":                  {10, 10},
	"DescribeSecurityGroupReferences":                     {20, 5},
	"DescribeSpotDatafeedSubscription":                    {100, 13},
	"DescribeSpotFleetInstances":                          {100, 5},
	"DescribeSpotFleetRequestHistory":                     {100, 5},
	"DescribeSpotFleetRequests":                           {50, 3},
	"DescribeStaleSecurityGroups":                         {20, 5},
	"DescribeStoreImageTasks":                             {50, 0.5},
	"DescribeVerifiedAccessInstanceLoggingConfigurations": {10, 2},
	"DetachVerifiedAccessTrustProvider":                   {10, 2},
	"DisableFastLaunch":                                   {5, 2},
	"DisableImageBlockPublicAccess":                       {1, 0.1},
	"DisableSnapshotBlockPublicAccess":                    {1, 0.1},
	"DisassociateCapacityReservationBillingOwner":         {1, 0.5},
	"DisassociateEnclaveCertificateIamRole":               {10, 1},
	"DisassociateIamInstanceProfile":                      {100, 5},
	"DisassociateNatGatewayAddress":                       {10, 1},
	"EnableFastLaunch":                                    {5, 2},
	"EnableImageBlockPublicAccess":                        {1, 0.1},
	"EnableSnapshotBlockPublicAccess":                     {1, 0.1},
	"GetAssociatedEnclaveCertificateIamRoles":             {10, 1},
	"GetDeclarativePoliciesReportSummary":                 {5, 5},
	"GetHostReservationPurchasePreview":                   {5, 2},
	"ModifyImageAttribute":                                {100, 5},
	"ModifyInstanceMetadataDefaults":                      {2, 2},
	"ModifyInstanceMetadataOptions":                       {100, 5},
	"ModifyLaunchTemplate":                                {100, 5},
	"ModifyNetworkInterfaceAttribute":                     {100, 5},
	"ModifySnapshotAttribute":                             {100, 5},
	"ModifyVerifiedAccessEndpoint":                        {20, 4},
	"ModifyVerifiedAccessEndpointPolicy":                  {20, 4},
	"ModifyVerifiedAccessGroup":                           {10, 2},
	"ModifyVerifiedAccessGroupPolicy":                     {20, 4},
	"ModifyVerifiedAccessInstance":                        {10, 2},
	"ModifyVerifiedAccessInstanceLoggingConfiguration":    {10, 2},
	"ModifyVerifiedAccessTrustProvider":                   {10, 2},
	"ModifyVpcEndpoint":                                   {4, 0.3},
	"ModifyVpcEndpointServiceConfiguration":               {10, 1},
	"MoveAddressToVpc":                                    {1, 1},
	"ProvisionByoipCidr":                                  {1, 0.1},
	"PurchaseCapacityBlock":                               {10, 0.15},
	"PurchaseCapacityBlockExtension":                      {10, 0.15},
	"PurchaseHostReservation":                             {5, 2},
	"PurchaseReservedInstancesOffering":                   {5, 5},
	"RejectVpcEndpointConnections":                        {10, 1},
	"RestoreAddressToClassic":                             {1, 1},
	"RevokeClientVpnIngress":                              {5, 2},
	"RunInstances":                                        {5, 2},
	"StartDeclarativePoliciesReport":                      {1, 1},
	"StartInstances":                                      {5, 2},
	"TerminateInstances":                                  {100, 5},
	"UnassignPrivateIpAddresses":                          {100, 5},
	"UnassignPrivateNatGatewayAddress":                    {10, 1},
	"WithdrawByoipCidr":                                   {1, 0.1},
}

// ec2Resource is the page's "Resource token bucket sizes and refill rates" table: one token per
// instance the call launches, terminates, starts or stops. The page lists these four actions
// only; CreateFleet (instant or not) is not among them, so a CreateFleet draws from its request
// bucket alone, whatever its target capacity.
var ec2Resource = map[string]rate{
	"RunInstances":       {1000, 2},
	"TerminateInstances": {1000, 20},
	"StartInstances":     {1000, 2},
	"StopInstances":      {1000, 20},
}

// ssmParameterThroughput are the actions sharing Parameter Store's default throughput.
var ssmParameterThroughput = map[string]bool{"GetParameter": true, "GetParameters": true, "GetParametersByPath": true}

// pricingQuery are the Price List Query API actions with their own bucket each.
var pricingQuery = map[string]rate{
	"DescribeServices":   {10, 5},
	"GetAttributeValues": {10, 5},
	"GetProducts":        {10, 5},
}

// EC2Category returns the request-rate category of an EC2 action. Every action the page does not
// place elsewhere is non-mutating when its name starts Describe, List, Search or Get, and mutating
// otherwise, as the page defines the two. An action of the unfiltered list is NonMutating here:
// whether a call draws from the smaller bucket depends on the call (UnfilteredBucket).
func EC2Category(action string) Category {
	_, uncategorized := ec2Uncategorized[action]
	switch {
	case uncategorized:
		return Uncategorized
	case ec2ResourceIntensive[action]:
		return ResourceIntensive
	case hasAnyPrefix(action, "Describe", "List", "Search", "Get"):
		return NonMutating
	}
	return Mutating
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// RequestBucket returns the request-rate bucket that meters action of service ("ec2", "iam",
// "sts", "ssm", "pricing", "sqs", "eks"): one token per request. ok is false when AWS publishes
// no limit for it, and the call is then unmetered:
//   - IAM and STS throttle with token buckets whose sizes AWS does not publish;
//   - SQS standard queues support "a nearly unlimited number of API calls per second";
//   - EKS publishes no request rate for its API;
//   - SSM publishes the Parameter Store throughput only (GetParameter, GetParameters,
//     GetParametersByPath share 40 per second);
//   - Pricing publishes DescribeServices, GetAttributeValues and GetProducts (10, refilled 5 per
//     second, each its own).
//
// For an EC2 action of the unfiltered list this is the bucket of a call with a filter or
// pagination; UnfilteredBucket gives the other one.
func RequestBucket(service, action string) (Bucket, bool) {
	switch service {
	case "ec2":
		if action == "" {
			return Bucket{}, false
		}
		r, ok := ec2Uncategorized[action]
		if !ok {
			r = categories[EC2Category(action)]
		}
		return Bucket{Name: "ec2/" + action, Capacity: r.capacity, RefillPerSecond: r.refill, Source: EC2Source}, true
	case "ssm":
		if ssmParameterThroughput[action] {
			return Bucket{Name: "ssm/parameter-store-throughput", Capacity: 40, RefillPerSecond: 40, Source: SSMSource}, true
		}
	case "pricing":
		if r, ok := pricingQuery[action]; ok {
			return Bucket{Name: "pricing/" + action, Capacity: r.capacity, RefillPerSecond: r.refill, Source: PricingSource}, true
		}
	}
	return Bucket{}, false
}

// UnfilteredBucket returns the smaller "unfiltered and unpaginated" bucket of an EC2 action of
// that list, which a call draws from when it names neither a filter nor pagination (MaxResults
// or NextToken); ok is false for every other action.
func UnfilteredBucket(service, action string) (Bucket, bool) {
	if service != "ec2" || !ec2Unfiltered[action] {
		return Bucket{}, false
	}
	r := categories[UnfilteredNonMutating]
	return Bucket{Name: "ec2/" + action + "/unfiltered", Capacity: r.capacity, RefillPerSecond: r.refill, Source: EC2Source}, true
}

// ResourceBucket returns the resource-rate bucket of an action: one token per instance the call
// launches (RunInstances), terminates (TerminateInstances), starts or stops. ok is false for
// every other action, CreateFleet included (see ec2Resource).
func ResourceBucket(service, action string) (Bucket, bool) {
	if service != "ec2" {
		return Bucket{}, false
	}
	r, ok := ec2Resource[action]
	if !ok {
		return Bucket{}, false
	}
	return Bucket{Name: "ec2/" + action + "/instances", Capacity: r.capacity, RefillPerSecond: r.refill, Source: EC2Source}, true
}
