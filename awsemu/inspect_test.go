package awsemu_test

import (
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/joinerhq/joiner/awsemu/inspect"
	"github.com/joinerhq/joiner/awsemu/state"
)

func TestInspectionEndpoint(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	if status, body := e.call(t, http.MethodPut, "/_awsemu/faults",
		strings.NewReader(`{"insufficientCapacity": [{"instanceType": "m5.large", "zone": "`+e.zone("a")+`", "capacityType": "on-demand"}]}`)); status != http.StatusOK {
		t.Fatalf("PUT faults: %d %s", status, body)
	}
	_, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		ImageId: aws.String(f.amd64AMI), InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets[e.zone("a")])})
	wantCode(t, err, "InsufficientInstanceCapacity", "injected capacity fault")
	if _, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		ImageId: aws.String(f.amd64AMI), InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets[e.zone("b")])}); err != nil {
		t.Fatal(err)
	}
	insts := e.inspectInstances(t)
	if len(insts) != 1 || insts[0].Zone != e.zone("b") || insts[0].State != "pending" {
		t.Errorf("instances: %+v", insts)
	}
}

// TestInspectionCalls: GET /_awsemu/calls counts the EC2 calls that succeeded, by action; a
// refused call and a dry run are not counted.
func TestInspectionCalls(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	run := func(dryRun bool, imageID string) error {
		_, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(1), DryRun: aws.Bool(dryRun),
			ImageId: aws.String(imageID), InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets[e.zone("a")])})
		return err
	}
	if err := run(false, f.amd64AMI); err != nil {
		t.Fatal(err)
	}
	wantCode(t, run(true, f.amd64AMI), "DryRunOperation", "dry run")
	wantCode(t, run(false, "ami-0000000"), "InvalidAMIID.NotFound", "missing image")
	resp, err := http.Get(e.url + "/_awsemu/calls")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var calls map[string]int
	if err := json.NewDecoder(resp.Body).Decode(&calls); err != nil {
		t.Fatal(err)
	}
	if calls["RunInstances"] != 1 {
		t.Errorf("RunInstances counted %d times, want the one that launched: %v", calls["RunInstances"], calls)
	}
}

// TestInspectionInstancePrices checks that each instance reports what its pool costs: the Price
// List's on-demand price (TestPricingGetProducts pins m5.large in us-west-2 at 0.096), or the
// spot price DescribeSpotPriceHistory reports now for its zone.
func TestInspectionInstancePrices(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	spot, err := e.ec2.DescribeSpotPriceHistory(t.Context(), &ec2.DescribeSpotPriceHistoryInput{
		InstanceTypes: []ec2types.InstanceType{ec2types.InstanceTypeM5Large}, ProductDescriptions: []string{"Linux/UNIX"},
		AvailabilityZone: aws.String(e.zone("b")),
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(spot.SpotPriceHistory) != 1 {
		t.Fatalf("spot prices now in %s: %+v", e.zone("b"), spot.SpotPriceHistory)
	}
	spotPrice, err := strconv.ParseFloat(*spot.SpotPriceHistory[0].SpotPrice, 64)
	if err != nil {
		t.Fatal(err)
	}
	launched := map[string]float64{}
	for _, tt := range []struct {
		zone    string
		market  *ec2types.InstanceMarketOptionsRequest
		capType string
		want    float64
	}{
		{zone: e.zone("a"), capType: "on-demand", want: 0.096},
		{zone: e.zone("b"), market: &ec2types.InstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeSpot}, capType: "spot", want: spotPrice},
	} {
		out, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
			ImageId: aws.String(f.amd64AMI), InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets[tt.zone]),
			InstanceMarketOptions: tt.market})
		if err != nil {
			t.Fatalf("%s in %s: %v", tt.capType, tt.zone, err)
		}
		launched[*out.Instances[0].InstanceId] = tt.want
	}
	insts := e.inspectInstances(t)
	if len(insts) != len(launched) {
		t.Fatalf("instances: %+v", insts)
	}
	for _, i := range insts {
		if want := launched[i.ID]; math.Abs(i.PricePerHour-want) > 1e-9 {
			t.Errorf("%s %s in %s: pricePerHour %v, want %v", i.CapacityType, i.InstanceType, i.Zone, i.PricePerHour, want)
		}
	}
	if spotPrice == 0.096 {
		t.Errorf("the spot price equals the on-demand price, so the test cannot tell them apart")
	}
}

// inspectInstances returns what GET /_awsemu/instances reports.
func (e *env) inspectInstances(t *testing.T) []inspect.Instance {
	t.Helper()
	status, body := e.call(t, http.MethodGet, "/_awsemu/instances", nil)
	if status != http.StatusOK {
		t.Fatalf("GET instances: %d %s", status, body)
	}
	var insts []inspect.Instance
	if err := json.Unmarshal(body, &insts); err != nil {
		t.Fatal(err)
	}
	return insts
}

// TestAuthorizationLog: the emulator authorizes SSM's GetParameters as AWS does
// (ssm:GetParameters on arn:aws:ssm:REGION::parameter/aws/service/...), so a policy scoped like
// Karpenter's reference policy allows it and not GetParameter, and every decision, allowed or
// denied, is in the authorization log the inspection endpoint serves, by role.
func TestAuthorizationLog(t *testing.T) {
	e := newEnv(t)
	e.setControllerPolicy(t, `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ssm:GetParameters",
		"Resource":"arn:aws:ssm:`+e.region+`::parameter/aws/service/*"}]}`)
	client := ssm.NewFromConfig(e.config(t, e.region, state.DefaultSeed().ControllerAccessKey))
	name := "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/standard/recommended/image_id"
	if _, err := client.GetParameters(t.Context(), &ssm.GetParametersInput{Names: []string{name}}); err != nil {
		t.Fatalf("GetParameters of a public parameter: %v", err)
	}
	_, err := client.GetParameter(t.Context(), &ssm.GetParameterInput{Name: aws.String(name)})
	wantCode(t, err, "AccessDeniedException", "GetParameter with only ssm:GetParameters granted")

	var roleARN string
	_ = e.state.Update(func(w *state.World) error {
		roleARN = w.IAM.Roles[state.DefaultSeed().ControllerRole].ARN
		return nil
	})
	resp, err := http.Get(e.url + "/_awsemu/authorizations?role=" + url.QueryEscape(roleARN))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var log inspect.Authorizations
	if err := json.NewDecoder(resp.Body).Decode(&log); err != nil {
		t.Fatal(err)
	}
	want := []state.Decision{
		{Action: "ssm:GetParameters", Resource: "arn:aws:ssm:" + e.region + "::parameter" + name, Allowed: true},
		{Action: "ssm:GetParameter", Resource: "arn:aws:ssm:" + e.region + "::parameter" + name},
	}
	if len(log.Decisions) != len(want) || log.Dropped != 0 {
		t.Fatalf("log = %+v, want %d decisions", log, len(want))
	}
	for i, d := range log.Decisions {
		if d.Action != want[i].Action || d.Resource != want[i].Resource || d.Allowed != want[i].Allowed ||
			d.Role != roleARN || d.Region != e.region || !strings.Contains(d.Principal, ":assumed-role/") {
			t.Errorf("decision %d = %+v, want %+v by %s in %s", i, d, want[i], roleARN, e.region)
		}
	}
}

// putFaultsRaw PUTs body to the faults endpoint and returns the status and the answer.
func putFaultsRaw(t *testing.T, e *env, body string) (int, string) {
	t.Helper()
	status, raw := e.call(t, http.MethodPut, "/_awsemu/faults", strings.NewReader(body))
	return status, string(raw)
}

// getFaults reads the faults endpoint.
func getFaults(t *testing.T, e *env) inspect.Faults {
	t.Helper()
	resp, err := http.Get(e.url + "/_awsemu/faults")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	var out inspect.Faults
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Injected == nil {
		t.Fatal("GET faults reports no injected counts")
	}
	return out
}

// TestInspectionFaultKnobs: the endpoint sets and reports errorRate, slowRate and slowLatency
// next to the other knobs, reports the faults injected so far by kind (kept across PUTs), and
// refuses a knob out of range naming it.
func TestInspectionFaultKnobs(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	if code, body := putFaultsRaw(t, e, `{"errorRate": 0.25}`); code != http.StatusOK {
		t.Fatalf("PUT errorRate: %d %s", code, body)
	}
	base := getFaults(t, e).Injected.Requests // the fixture's calls
	failed := 0
	for range 8 {
		if _, err := e.ec2.DescribeAvailabilityZones(t.Context(), &ec2.DescribeAvailabilityZonesInput{}); err != nil {
			wantCode(t, err, "InternalError", "injected 500")
			failed++
		}
	}
	got := getFaults(t, e)
	if failed != 2 || got.ErrorRate != 0.25 || got.Injected.Errors != 2 || got.Injected.Requests-base != 8 {
		t.Errorf("8 calls at errorRate 0.25: %d failed; endpoint reports %+v, injected %+v since %d requests", failed, got, *got.Injected, base)
	}

	pool := `{"instanceType": "m5.large", "zone": "` + e.zone("a") + `", "capacityType": "on-demand"}`
	if code, body := putFaultsRaw(t, e, `{"slowRate": 0.5, "slowLatency": "3s", "throttleRate": 0.3, "describeInstancesLag": "2s", "insufficientCapacity": [`+pool+`]}`); code != http.StatusOK {
		t.Fatalf("PUT slowRate: %d %s", code, body)
	}
	got = getFaults(t, e)
	if got.ErrorRate != 0 || got.SlowRate != 0.5 || got.SlowLatency != "3s" || got.ThrottleRate != 0.3 || got.DescribeInstancesLag != "2s" || len(got.InsufficientCapacity) != 1 {
		t.Errorf("after the second PUT the endpoint reports %+v", got)
	}
	if got.Injected.Errors != 2 {
		t.Errorf("a PUT reset the injected counts: %+v", *got.Injected)
	}
	// The knobs off again, but the capacity fault: one refused launch is counted.
	if code, body := putFaultsRaw(t, e, `{"insufficientCapacity": [`+pool+`]}`); code != http.StatusOK {
		t.Fatalf("PUT: %d %s", code, body)
	}
	_, err := e.ec2.RunInstances(t.Context(), &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
		ImageId: aws.String(f.amd64AMI), InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets[e.zone("a")])})
	wantCode(t, err, "InsufficientInstanceCapacity", "injected capacity fault")
	if got := getFaults(t, e); got.Injected.InsufficientCapacity != 1 {
		t.Errorf("injected %+v, want one capacity refusal", *got.Injected)
	}

	checkRefusedFaults(t, e)
}

// checkRefusedFaults: a knob out of range is refused with a 400 naming it, and changes nothing.
func checkRefusedFaults(t *testing.T, e *env) {
	t.Helper()
	for _, tt := range []struct{ body, field string }{
		{`{"errorRate": 1.5}`, "errorRate"},
		{`{"throttleRate": -0.1}`, "throttleRate"},
		{`{"slowRate": 0.5}`, "slowLatency"},
		{`{"slowRate": 0.5, "slowLatency": "soon"}`, "slowLatency"},
		{`{"describeInstancesLag": "-2s"}`, "describeInstancesLag"},
		{`{"latency": "2"}`, "latency"},
		{`{"rateLimits": "fast"}`, "rateLimits"},
		{`{"rateLimits": "0"}`, "rateLimits"},
	} {
		code, body := putFaultsRaw(t, e, tt.body)
		if code != http.StatusBadRequest || !strings.Contains(body, tt.field) {
			t.Errorf("PUT %s = %d %q, want 400 naming %s", tt.body, code, body, tt.field)
		}
	}
	if got := getFaults(t, e); len(got.InsufficientCapacity) != 1 || got.ErrorRate != 0 || got.RateLimits != "off" {
		t.Errorf("a refused PUT changed the faults: %+v", got)
	}
}

// TestAuthorizationLogDropsByRole: the authorization log keeps state.MaxDecisions decisions of
// every principal together, and the endpoint reports, for the role asked for, how many of that
// role's own decisions it dropped: other principals filling the log leave a role's report
// complete; once its own oldest are dropped, it says how many.
func TestAuthorizationLogDropsByRole(t *testing.T) {
	e := newEnv(t)
	const controller, node = "arn:aws:iam::111122223333:role/Controller", "arn:aws:iam::111122223333:role/Node"
	record := func(role string, n int) {
		_ = e.state.Update(func(w *state.World) error {
			for range n {
				w.IAM.RecordDecision(state.Decision{Role: role, Action: "ec2:DescribeInstances", Resource: "*", Allowed: true})
			}
			return nil
		})
	}
	report := func() inspect.Authorizations {
		t.Helper()
		resp, err := http.Get(e.url + "/_awsemu/authorizations?role=" + url.QueryEscape(controller))
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		var log inspect.Authorizations
		if err := json.NewDecoder(resp.Body).Decode(&log); err != nil {
			t.Fatal(err)
		}
		return log
	}
	record(node, state.MaxDecisions)
	record(controller, 3)
	if log := report(); len(log.Decisions) != 3 || log.Dropped != 0 {
		t.Errorf("after the nodes filled the log: %d decisions, %d dropped; want 3, 0", len(log.Decisions), log.Dropped)
	}
	record(node, state.MaxDecisions-2)
	if log := report(); len(log.Decisions) != 2 || log.Dropped != 1 {
		t.Errorf("after the controller's oldest went: %d decisions, %d dropped; want 2, 1", len(log.Decisions), log.Dropped)
	}
	_ = e.state.Update(func(w *state.World) error {
		if w.IAM.DroppedDecisions != state.MaxDecisions+1 || w.IAM.DroppedByRole[node] != state.MaxDecisions {
			t.Errorf("dropped %d in all, %d of the nodes; want %d, %d", w.IAM.DroppedDecisions, w.IAM.DroppedByRole[node], state.MaxDecisions+1, state.MaxDecisions)
		}
		return nil
	})
}
