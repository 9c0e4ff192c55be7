package interruption

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
)

// Kind is what a message means for its instances. The values are Karpenter's message_type label
// values of karpenter_interruption_received_messages_total.
type Kind string

// Kinds of message.
const (
	// KindSpotInterruption: EC2 reclaims the spot instance in two minutes.
	KindSpotInterruption Kind = "spot_interrupted"
	// KindRebalanceRecommendation: the spot instance is at elevated risk of interruption.
	KindRebalanceRecommendation Kind = "rebalance_recommendation"
	// KindScheduledChange: AWS Health scheduled maintenance or retirement of the instance.
	KindScheduledChange Kind = "scheduled_change"
	// KindInstanceStopped: the instance is stopping or stopped.
	KindInstanceStopped Kind = "instance_stopped"
	// KindInstanceTerminated: the instance is shutting down or terminated.
	KindInstanceTerminated Kind = "instance_terminated"
	// KindNoOp: a well-formed event that asks for nothing (an instance starting, another
	// service's health event, an event type this controller does not know).
	KindNoOp Kind = "no_op"
	// KindMalformed labels the messages Parse refuses; it is not a Kind of a Message.
	KindMalformed Kind = "malformed"
)

// EventBridge sources and detail types of the events an interruption queue receives.
const (
	sourceEC2    = "aws.ec2"
	sourceHealth = "aws.health"

	detailSpotInterruption = "EC2 Spot Instance Interruption Warning"
	detailRebalance        = "EC2 Instance Rebalance Recommendation"
	detailStateChange      = "EC2 Instance State-change Notification"
	detailHealth           = "AWS Health Event"
)

// Message is an EventBridge event read from the queue.
type Message struct {
	Kind Kind
	// ID is the event's id; Source and DetailType say what it is.
	ID, Source, DetailType string
	// Time is when the event happened.
	Time time.Time
	// InstanceIDs are the EC2 instances the event is about.
	InstanceIDs []string
	// State is a state-change notification's new instance state.
	State string
}

// event is the EventBridge envelope; Detail is read per detail type.
type event struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Time       string          `json:"time"`
	Detail     json.RawMessage `json:"detail"`
}

type ec2Detail struct {
	InstanceID string `json:"instance-id"`
	State      string `json:"state"`
}

type healthDetail struct {
	Service           string `json:"service"`
	EventTypeCategory string `json:"eventTypeCategory"`
	AffectedEntities  []struct {
		EntityValue string `json:"entityValue"`
	} `json:"affectedEntities"`
}

var instanceIDPattern = regexp.MustCompile(`^i-[0-9a-f]{8}([0-9a-f]{9})?$`)

// Parse reads the body of an SQS message as an EventBridge event. An event it does not act on
// (another source or detail type, a state change to pending or running, a health event of
// another service or category) is KindNoOp. A body that is not an EventBridge event, or an event
// of a known type lacking what that type must carry, is an error naming the field.
func Parse(body string) (Message, error) {
	if body == "" {
		return Message{}, errors.New("the message body is empty, want an EventBridge event")
	}
	var ev event
	if err := json.Unmarshal([]byte(body), &ev); err != nil {
		return Message{}, fmt.Errorf("the message body is not an EventBridge event, %w", err)
	}
	if ev.Source == "" || ev.DetailType == "" {
		return Message{}, errors.New(`the message has no "source" or "detail-type": not an EventBridge event`)
	}
	m := Message{Kind: KindNoOp, ID: ev.ID, Source: ev.Source, DetailType: ev.DetailType}
	if ev.Version != "0" {
		return m, nil // EventBridge has only version "0"; a later one is not understood
	}
	var err error
	switch {
	case ev.Source == sourceEC2 && ev.DetailType == detailSpotInterruption:
		m.Kind = KindSpotInterruption
		err = m.readEC2(ev.Detail, false)
	case ev.Source == sourceEC2 && ev.DetailType == detailRebalance:
		m.Kind = KindRebalanceRecommendation
		err = m.readEC2(ev.Detail, false)
	case ev.Source == sourceEC2 && ev.DetailType == detailStateChange:
		err = m.readEC2(ev.Detail, true)
	case ev.Source == sourceHealth && ev.DetailType == detailHealth:
		err = m.readHealth(ev.Detail)
	default:
		return m, nil
	}
	if err != nil {
		return Message{}, fmt.Errorf("reading a %q event, %w", ev.DetailType, err)
	}
	if m.Kind == KindNoOp {
		return m, nil
	}
	if m.Time, err = time.Parse(time.RFC3339, ev.Time); err != nil {
		return Message{}, fmt.Errorf(`reading a %q event, "time" %q is not an RFC 3339 time`, ev.DetailType, ev.Time)
	}
	return m, nil
}

// readEC2 reads an EC2 event's detail: its instance, and with state its new state.
func (m *Message) readEC2(raw json.RawMessage, state bool) error {
	var d ec2Detail
	if len(raw) == 0 {
		return errors.New(`it has no "detail"`)
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf(`"detail" is not an object, %w`, err)
	}
	if !instanceIDPattern.MatchString(d.InstanceID) {
		return fmt.Errorf(`"detail.instance-id" %q is not an EC2 instance id`, d.InstanceID)
	}
	m.InstanceIDs = []string{d.InstanceID}
	if !state {
		return nil
	}
	m.State = d.State
	switch d.State {
	case "stopping", "stopped":
		m.Kind = KindInstanceStopped
	case "shutting-down", "terminated":
		m.Kind = KindInstanceTerminated
	case "pending", "running":
		m.Kind = KindNoOp
	default:
		return fmt.Errorf(`"detail.state" %q is not an EC2 instance state`, d.State)
	}
	return nil
}

// readHealth reads an AWS Health event: a scheduled change of EC2 instances, or nothing to do
// (another service or category, or no instance among the affected entities).
func (m *Message) readHealth(raw json.RawMessage) error {
	var d healthDetail
	if len(raw) == 0 {
		return errors.New(`it has no "detail"`)
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return fmt.Errorf(`"detail" is not an AWS Health event detail, %w`, err)
	}
	if d.Service != "EC2" || d.EventTypeCategory != "scheduledChange" {
		return nil
	}
	// Entities other than instances (a dedicated host, a volume) are not Joiner's to act on.
	for _, e := range d.AffectedEntities {
		if instanceIDPattern.MatchString(e.EntityValue) {
			m.InstanceIDs = append(m.InstanceIDs, e.EntityValue)
		}
	}
	if len(m.InstanceIDs) > 0 {
		m.Kind = KindScheduledChange
	}
	return nil
}
