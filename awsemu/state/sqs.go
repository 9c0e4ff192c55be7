package state

import (
	"encoding/json"
	"fmt"
	"time"
)

// Queue is an SQS queue.
type Queue struct {
	Name     string
	Messages []*Message

	// arrived is closed by the next Send; nil until Arrivals asks for it.
	arrived chan struct{}
}

// Arrivals returns a channel that the next Send to the queue closes, for long polling to wait
// on outside the world's lock.
func (q *Queue) Arrivals() <-chan struct{} {
	if q.arrived == nil {
		q.arrived = make(chan struct{})
	}
	return q.arrived
}

// NextVisible returns when the earliest in-flight message becomes visible again, or false when
// no message is in flight at now.
func (q *Queue) NextVisible(now time.Time) (time.Time, bool) {
	var next time.Time
	for _, m := range q.Messages {
		if m.VisibleAt.After(now) && (next.IsZero() || m.VisibleAt.Before(next)) {
			next = m.VisibleAt
		}
	}
	return next, !next.IsZero()
}

// Message is one SQS message.
type Message struct {
	ID            string
	Body          string
	SentAt        time.Time
	VisibleAt     time.Time
	ReceiptHandle string
	ReceiveCount  int
}

// PutQueue creates the named queue in the region if it does not exist and returns it.
func (w *World) PutQueue(r *Region, name string) *Queue {
	if q, ok := r.Queues[name]; ok {
		return q
	}
	q := &Queue{Name: name}
	r.Queues[name] = q
	return q
}

// Send appends a message to the queue, visible at once, and wakes the receives waiting on
// Arrivals.
func (w *World) Send(q *Queue, body string) *Message {
	m := &Message{ID: uuid(w), Body: body, SentAt: w.Now, VisibleAt: w.Now}
	q.Messages = append(q.Messages, m)
	if q.arrived != nil {
		close(q.arrived)
		q.arrived = nil
	}
	return m
}

func uuid(w *World) string {
	hex := fmt.Sprintf("%032s", w.NewID("")[1:])
	return hex[0:8] + "-" + hex[8:12] + "-4" + hex[13:16] + "-8" + hex[17:20] + "-" + hex[20:32]
}

// Interruption kinds, as EventBridge delivers them to an interruption queue.
const (
	EventSpotInterruption = "spot-interruption"
	EventRebalance        = "rebalance-recommendation"
	EventScheduledChange  = "scheduled-change"
	EventStateChange      = "state-change"
)

// SpotInterruptionNotice is how long after the warning EC2 reclaims a spot instance.
const SpotInterruptionNotice = 2 * time.Minute

// Event sends an EventBridge event of the given kind about the instance to every queue named in
// InterruptionQueues of its region. A spot interruption also schedules the instance's
// termination SpotInterruptionNotice later.
func (w *World) Event(r *Region, i *Instance, kind string) error {
	instanceARN := fmt.Sprintf("arn:aws:ec2:%s:%s:instance/%s", r.Name, w.AccountID, i.ID)
	ev := map[string]any{
		"version": "0", "id": uuid(w), "source": "aws.ec2", "account": w.AccountID, "time": w.Now.UTC().Format(time.RFC3339),
		"region": r.Name, "resources": []string{instanceARN},
	}
	switch kind {
	case EventSpotInterruption:
		ev["detail-type"] = "EC2 Spot Instance Interruption Warning"
		ev["detail"] = map[string]string{"instance-id": i.ID, "instance-action": "terminate"}
		at := w.Now.Add(SpotInterruptionNotice)
		i.InterruptAt = &at
	case EventRebalance:
		ev["detail-type"] = "EC2 Instance Rebalance Recommendation"
		ev["detail"] = map[string]string{"instance-id": i.ID}
	case EventScheduledChange:
		ev["source"], ev["detail-type"] = "aws.health", "AWS Health Event"
		ev["detail"] = map[string]any{
			"service": "EC2", "eventTypeCategory": "scheduledChange", "eventTypeCode": "AWS_EC2_PERSISTENT_INSTANCE_RETIREMENT_SCHEDULED",
			"affectedEntities": []map[string]string{{"entityValue": i.ID}},
		}
	case EventStateChange:
		ev["detail-type"] = "EC2 Instance State-change Notification"
		ev["detail"] = map[string]string{"instance-id": i.ID, "state": i.State}
	default:
		return fmt.Errorf("unknown event kind %q", kind)
	}
	body, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("encoding a %s event, %w", kind, err)
	}
	for _, name := range r.InterruptionQueues {
		if q := r.Queues[name]; q != nil {
			w.Send(q, string(body))
		}
	}
	return nil
}
