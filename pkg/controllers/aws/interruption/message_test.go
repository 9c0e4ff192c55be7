package interruption_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/joinerhq/joiner/pkg/controllers/aws/interruption"
)

// Real-shaped EventBridge events, as AWS documents them for EC2 and AWS Health.
const (
	spotInterruption = `{"version":"0","id":"1e5527d7-bb36-4607-3370-4164db56a40e","detail-type":"EC2 Spot Instance Interruption Warning",
"source":"aws.ec2","account":"123456789012","time":"2026-03-01T12:00:00Z","region":"us-west-2",
"resources":["arn:aws:ec2:us-west-2:123456789012:instance/i-1234567890abcdef0"],
"detail":{"instance-id":"i-1234567890abcdef0","instance-action":"terminate"}}`
	rebalance = `{"version":"0","id":"5d5e8b5b-3c7d-2f2b-5a1f-4d2b6a6f6c1d","detail-type":"EC2 Instance Rebalance Recommendation",
"source":"aws.ec2","account":"123456789012","time":"2026-03-01T12:00:00Z","region":"us-west-2",
"resources":["arn:aws:ec2:us-west-2:123456789012:instance/i-1234567890abcdef0"],"detail":{"instance-id":"i-1234567890abcdef0"}}`
	scheduledChange = `{"version":"0","id":"7bf73129-1428-4cd3-a780-95db273d1602","detail-type":"AWS Health Event","source":"aws.health",
"account":"123456789012","time":"2026-03-01T12:00:00Z","region":"us-west-2","resources":["i-1234567890abcdef0"],
"detail":{"eventArn":"arn:aws:health:us-west-2::event/EC2/AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED/x","service":"EC2",
"eventTypeCode":"AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED","eventTypeCategory":"scheduledChange",
"startTime":"Sat, 07 Mar 2026 12:00:00 GMT","eventDescription":[{"language":"en_US","latestDescription":"retirement"}],
"affectedEntities":[{"entityValue":"i-1234567890abcdef0"},{"entityValue":"i-0abcdef1234567890"}]}}`
)

func stateChange(state string) string {
	return `{"version":"0","id":"7bf73129-1428-4cd3-a780-95db273d1602","detail-type":"EC2 Instance State-change Notification",
"source":"aws.ec2","account":"123456789012","time":"2026-03-01T12:00:00Z","region":"us-west-2",
"resources":["arn:aws:ec2:us-west-2:123456789012:instance/i-1234567890abcdef0"],
"detail":{"instance-id":"i-1234567890abcdef0","state":"` + state + `"}}`
}

func TestParse(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	one := []string{"i-1234567890abcdef0"}
	for _, tc := range []struct {
		name string
		body string
		want interruption.Message
	}{
		{"spot interruption", spotInterruption, interruption.Message{Kind: interruption.KindSpotInterruption, ID: "1e5527d7-bb36-4607-3370-4164db56a40e",
			Source: "aws.ec2", DetailType: "EC2 Spot Instance Interruption Warning", Time: at, InstanceIDs: one}},
		{"rebalance recommendation", rebalance, interruption.Message{Kind: interruption.KindRebalanceRecommendation, ID: "5d5e8b5b-3c7d-2f2b-5a1f-4d2b6a6f6c1d",
			Source: "aws.ec2", DetailType: "EC2 Instance Rebalance Recommendation", Time: at, InstanceIDs: one}},
		{"scheduled change", scheduledChange, interruption.Message{Kind: interruption.KindScheduledChange, ID: "7bf73129-1428-4cd3-a780-95db273d1602",
			Source: "aws.health", DetailType: "AWS Health Event", Time: at, InstanceIDs: []string{"i-1234567890abcdef0", "i-0abcdef1234567890"}}},
		{"health event of another service", strings.Replace(scheduledChange, `"service":"EC2"`, `"service":"RDS"`, 1),
			interruption.Message{Kind: interruption.KindNoOp, ID: "7bf73129-1428-4cd3-a780-95db273d1602", Source: "aws.health", DetailType: "AWS Health Event"}},
		{"health issue, not a scheduled change", strings.Replace(scheduledChange, `"eventTypeCategory":"scheduledChange"`, `"eventTypeCategory":"issue"`, 1),
			interruption.Message{Kind: interruption.KindNoOp, ID: "7bf73129-1428-4cd3-a780-95db273d1602", Source: "aws.health", DetailType: "AWS Health Event"}},
		{"scheduled change of no instance", strings.NewReplacer(`"i-1234567890abcdef0"}`, `"h-0123"}`, `"i-0abcdef1234567890"}`, `"vol-0123"}`).Replace(scheduledChange),
			interruption.Message{Kind: interruption.KindNoOp, ID: "7bf73129-1428-4cd3-a780-95db273d1602", Source: "aws.health", DetailType: "AWS Health Event"}},
		{"stopping", stateChange("stopping"), stateMessage(interruption.KindInstanceStopped, "stopping", at)},
		{"stopped", stateChange("stopped"), stateMessage(interruption.KindInstanceStopped, "stopped", at)},
		{"shutting down", stateChange("shutting-down"), stateMessage(interruption.KindInstanceTerminated, "shutting-down", at)},
		{"terminated", stateChange("terminated"), stateMessage(interruption.KindInstanceTerminated, "terminated", at)},
		{"running", stateChange("running"), stateMessage(interruption.KindNoOp, "running", time.Time{})},
		{"pending", stateChange("pending"), stateMessage(interruption.KindNoOp, "pending", time.Time{})},
		{"unknown detail type", `{"version":"0","id":"x","detail-type":"EC2 AMI State Change","source":"aws.ec2","detail":{}}`,
			interruption.Message{Kind: interruption.KindNoOp, ID: "x", Source: "aws.ec2", DetailType: "EC2 AMI State Change"}},
		{"unknown source", `{"version":"0","id":"x","detail-type":"EC2 Spot Instance Interruption Warning","source":"my.app","detail":{}}`,
			interruption.Message{Kind: interruption.KindNoOp, ID: "x", Source: "my.app", DetailType: "EC2 Spot Instance Interruption Warning"}},
		{"unknown version", strings.Replace(spotInterruption, `"version":"0"`, `"version":"1"`, 1),
			interruption.Message{Kind: interruption.KindNoOp, ID: "1e5527d7-bb36-4607-3370-4164db56a40e", Source: "aws.ec2", DetailType: "EC2 Spot Instance Interruption Warning"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := interruption.Parse(tc.body)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func stateMessage(kind interruption.Kind, state string, at time.Time) interruption.Message {
	return interruption.Message{Kind: kind, ID: "7bf73129-1428-4cd3-a780-95db273d1602", Source: "aws.ec2",
		DetailType: "EC2 Instance State-change Notification", Time: at, InstanceIDs: []string{"i-1234567890abcdef0"}, State: state}
}

func TestParseMalformed(t *testing.T) {
	for _, tc := range []struct {
		name, body, wantErr string
	}{
		{"empty", "", "empty"},
		{"not JSON", "hello", "not an EventBridge event"},
		{"a JSON array", `[1,2]`, "not an EventBridge event"},
		{"no detail-type", `{"version":"0","source":"aws.ec2","detail":{"instance-id":"i-1234567890abcdef0"}}`, `"detail-type"`},
		{"no instance id", strings.Replace(spotInterruption, `"instance-id":"i-1234567890abcdef0",`, ``, 1), `"detail.instance-id" ""`},
		{"not an instance id", strings.Replace(rebalance, `"instance-id":"i-1234567890abcdef0"`, `"instance-id":"vol-0123"`, 1), `"detail.instance-id" "vol-0123"`},
		{"no detail", `{"version":"0","id":"x","detail-type":"EC2 Spot Instance Interruption Warning","source":"aws.ec2","time":"2026-03-01T12:00:00Z"}`, `no "detail"`},
		{"detail not an object", strings.Replace(stateChange("stopped"), `"detail":{"instance-id":"i-1234567890abcdef0","state":"stopped"}`, `"detail":"stopped"`, 1), `"detail" is not an object`},
		{"unknown state", stateChange("melting"), `"detail.state" "melting"`},
		{"no time", strings.Replace(spotInterruption, `"time":"2026-03-01T12:00:00Z",`, ``, 1), `"time" ""`},
		{"bad time", strings.Replace(spotInterruption, `2026-03-01T12:00:00Z`, `yesterday`, 1), `"time" "yesterday"`},
		{"health detail of the wrong shape", strings.Replace(scheduledChange, `"affectedEntities":[`, `"affectedEntities":"all","x":[`, 1), `AWS Health event detail`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := interruption.Parse(tc.body)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Parse = %+v, %v; want an error containing %q", got, err, tc.wantErr)
			}
		})
	}
}
