package awsemu_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/joinerhq/joiner/awsemu/state"
)

type event struct {
	DetailType string         `json:"detail-type"`
	Source     string         `json:"source"`
	Detail     map[string]any `json:"detail"`
}

func TestInterruptionEventsOverSQS(t *testing.T) {
	e := newEnv(t)
	f := e.fixture(t)
	client := sqs.NewFromConfig(e.config(t, e.region, "AKIDJOINERCONTROLLER"))
	ctx := t.Context()
	url, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("demo")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("nope")})
	wantCode(t, err, "QueueDoesNotExist", "unknown queue")

	run, err := e.ec2.RunInstances(ctx, &ec2.RunInstancesInput{MinCount: aws.Int32(1), MaxCount: aws.Int32(1), ImageId: aws.String(f.amd64AMI),
		InstanceType: ec2types.InstanceTypeM5Large, SubnetId: aws.String(f.subnets[e.zone("a")]),
		InstanceMarketOptions: &ec2types.InstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeSpot}})
	if err != nil {
		t.Fatal(err)
	}
	id := *run.Instances[0].InstanceId
	e.clock.Step(state.PendingFor)
	drain := func() []event { // receive and delete everything visible
		t.Helper()
		var out []event
		for {
			msgs, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl, MaxNumberOfMessages: 10})
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs.Messages) == 0 {
				return out
			}
			for _, m := range msgs.Messages {
				var ev event
				if err := json.Unmarshal([]byte(*m.Body), &ev); err != nil {
					t.Fatal(err)
				}
				out = append(out, ev)
				if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url.QueueUrl, ReceiptHandle: m.ReceiptHandle}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if evs := drain(); len(evs) != 1 || evs[0].Detail["state"] != "running" {
		t.Fatalf("after start: %+v", evs)
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.url+"/_awsemu/events", strings.NewReader(`{"instanceID": "`+id+`", "kind": "spot-interruption"}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	evs := drain()
	if len(evs) != 1 || evs[0].DetailType != "EC2 Spot Instance Interruption Warning" || evs[0].Detail["instance-id"] != id {
		t.Fatalf("interruption: %+v", evs)
	}
	e.clock.Step(state.SpotInterruptionNotice)
	evs = drain()
	if len(evs) != 1 || evs[0].Detail["state"] != "shutting-down" {
		t.Fatalf("two minutes later: %+v", evs)
	}

}

func TestSQSVisibilityTimeout(t *testing.T) {
	e := newEnv(t)
	client := sqs.NewFromConfig(e.config(t, e.region, "AKIDJOINERCONTROLLER"))
	ctx := t.Context()
	url, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("demo")})
	if err != nil {
		t.Fatal(err)
	}
	// A received message that is not deleted comes back after its visibility timeout.
	if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url.QueueUrl, MessageBody: aws.String(`{"detail-type":"test"}`)}); err != nil {
		t.Fatal(err)
	}
	first, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl, VisibilityTimeout: 20})
	if err != nil || len(first.Messages) != 1 {
		t.Fatalf("receive: %v %+v", err, first)
	}
	if again, _ := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl}); len(again.Messages) != 0 {
		t.Error("an in-flight message was received twice")
	}
	e.clock.Step(20 * time.Second)
	if again, _ := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl}); len(again.Messages) != 1 {
		t.Error("the message did not come back after its visibility timeout")
	}
	// A stale handle succeeds but deletes nothing, as in SQS.
	if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url.QueueUrl, ReceiptHandle: first.Messages[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	e.clock.Step(30 * time.Second)
	if again, _ := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl}); len(again.Messages) != 1 {
		t.Error("a stale receipt handle deleted the message")
	}
	_, err = client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url.QueueUrl, ReceiptHandle: aws.String("garbage")})
	wantCode(t, err, "ReceiptHandleIsInvalid", "a malformed receipt handle")
}

// TestSQSLongPolling: a receive with WaitTimeSeconds and nothing visible waits on the emulator's
// clock, answering as soon as a message is sent or an in-flight one becomes visible again, and
// empty once the wait ends.
func TestSQSLongPolling(t *testing.T) {
	e := newEnv(t)
	client := sqs.NewFromConfig(e.config(t, "us-west-2", "AKIDJOINERCONTROLLER"))
	ctx := t.Context()
	url, err := client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("demo")})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		out *sqs.ReceiveMessageOutput
		err error
	}
	poll := func(wait, visibility int32) <-chan result {
		done := make(chan result, 1)
		go func() {
			out, err := client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl, WaitTimeSeconds: wait, VisibilityTimeout: visibility})
			done <- result{out, err}
		}()
		deadline := time.Now().Add(10 * time.Second)
		for !e.clock.HasWaiters() {
			if time.Now().After(deadline) {
				t.Fatal("the long poll never waited on the clock")
			}
			select {
			case r := <-done:
				t.Fatalf("answered before anything arrived: %+v %v", r.out, r.err)
			case <-time.After(5 * time.Millisecond):
			}
		}
		return done
	}

	waiting := poll(20, 10)
	if _, err := client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: url.QueueUrl, MessageBody: aws.String(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	r := <-waiting
	if r.err != nil || len(r.out.Messages) != 1 || *r.out.Messages[0].Body != `{"n":1}` {
		t.Fatalf("a message sent during the wait: %+v %v", r.out, r.err)
	}

	// The message is in flight for 10s: a 20s poll gets it back when it becomes visible again.
	waiting = poll(20, 10)
	e.clock.Step(10 * time.Second)
	if r = <-waiting; r.err != nil || len(r.out.Messages) != 1 {
		t.Fatalf("a message visible again during the wait: %+v %v", r.out, r.err)
	}
	if _, err := client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: url.QueueUrl, ReceiptHandle: r.out.Messages[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}

	waiting = poll(5, 0)
	e.clock.Step(5 * time.Second)
	if r := <-waiting; r.err != nil || len(r.out.Messages) != 0 {
		t.Fatalf("after the wait with nothing sent: %+v %v", r.out, r.err)
	}

	_, err = client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: url.QueueUrl, WaitTimeSeconds: 21})
	wantCode(t, err, "InvalidParameterValue", "WaitTimeSeconds over 20")
}
