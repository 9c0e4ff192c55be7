package sqs

import (
	"context"
	"crypto/md5" // SQS's own body digest is MD5, and the SDK checks it
	"encoding/hex"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/utils/clock"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

// DefaultVisibilityTimeout hides a received message for this long unless the request says
// otherwise.
const DefaultVisibilityTimeout = 30 * time.Second

// MaxWaitTime is the longest long poll SQS allows (WaitTimeSeconds 20).
const MaxWaitTime = 20 * time.Second

// observeEvery is how often a waiting long poll reads the world again: the world sends the
// events of instance lifecycles (a spot instance reclaimed, a state change) when it is next
// read, and a long poll must not sleep through them.
const observeEvery = time.Second

// Handler serves SQS over a State.
type Handler struct {
	state *state.State
	clock clock.Clock
}

// New returns the SQS handler over st; long polls wait on clk.
func New(st *state.State, clk clock.Clock) *Handler { return &Handler{state: st, clock: clk} }

type request struct {
	QueueName           string `json:"QueueName"`
	QueueURL            string `json:"QueueUrl"`
	MessageBody         string `json:"MessageBody"`
	ReceiptHandle       string `json:"ReceiptHandle"`
	MaxNumberOfMessages *int   `json:"MaxNumberOfMessages"`
	VisibilityTimeout   *int   `json:"VisibilityTimeout"`
	WaitTimeSeconds     int    `json:"WaitTimeSeconds"`
}

type message struct {
	MessageID     string            `json:"MessageId"`
	ReceiptHandle string            `json:"ReceiptHandle"`
	MD5OfBody     string            `json:"MD5OfBody"`
	Body          string            `json:"Body"`
	Attributes    map[string]string `json:"Attributes"`
}

func digest(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Serve answers one SQS request from the caller in call. A ReceiveMessage with WaitTimeSeconds
// that finds nothing visible waits, on the clock and outside the world's lock, until a message is
// sent to the queue, an in-flight one becomes visible again, the wait ends or the caller goes,
// reading the world again every observeEvery meanwhile.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, call wire.Call) {
	var in request
	if err := wire.DecodeJSON(r, &in); err != nil {
		wire.WriteJSONError(w, call.RequestID, err)
		return
	}
	op := wire.Target(r)
	var deadline time.Time
	for {
		var out any
		var wake <-chan struct{}
		var wait time.Duration
		err := h.state.Update(func(world *state.World) error {
			q, url, err := h.queue(world, call, r, op, in)
			if err != nil {
				return err
			}
			if out, err = serve(world, op, q, in, url); err != nil {
				return err
			}
			if op != "ReceiveMessage" || in.WaitTimeSeconds == 0 || len(out.(map[string][]message)["Messages"]) > 0 {
				return nil
			}
			if deadline.IsZero() {
				deadline = world.Now.Add(time.Duration(in.WaitTimeSeconds) * time.Second)
			}
			if wait = deadline.Sub(world.Now); wait <= 0 {
				return nil
			}
			if next, ok := q.NextVisible(world.Now); ok {
				wait = min(wait, next.Sub(world.Now))
			}
			wait = min(wait, observeEvery)
			wake = q.Arrivals()
			return nil
		})
		if err != nil {
			wire.WriteJSONError(w, call.RequestID, err)
			return
		}
		if wake == nil {
			wire.WriteJSON(w, call.RequestID, out)
			return
		}
		if !h.wait(r.Context(), wake, wait) {
			return
		}
	}
}

// wait waits for wake or for d on the clock; it reports false when ctx ended first. The timer
// is stopped either way, so that a fake clock is left with no waiter.
func (h *Handler) wait(ctx context.Context, wake <-chan struct{}, d time.Duration) bool {
	timer := h.clock.NewTimer(d)
	defer timer.Stop()
	select {
	case <-wake:
	case <-timer.C():
	case <-ctx.Done():
		return false
	}
	return true
}

// queue authorizes the call and returns its queue and the queue's URL.
func (h *Handler) queue(world *state.World, call wire.Call, r *http.Request, op string, in request) (*state.Queue, string, error) {
	p, err := authz.Identify(world, call)
	if err != nil {
		return nil, "", wire.NewError(http.StatusBadRequest, "InvalidClientTokenId", "The security token included in the request is invalid.")
	}
	region, err := world.Region(call.Region)
	if err != nil {
		return nil, "", wire.NewError(http.StatusBadRequest, "InvalidAddress", "%v", err)
	}
	name := in.QueueName
	if in.QueueURL != "" {
		name = in.QueueURL[strings.LastIndex(in.QueueURL, "/")+1:]
	}
	queueARN := "arn:aws:sqs:" + region.Name + ":" + world.AccountID + ":" + name
	if err := authz.Authorize(world, p, authz.IAM, policy.Request{Action: "sqs:" + op, Resource: queueARN}); err != nil {
		return nil, "", wire.NewError(http.StatusBadRequest, "AccessDenied", "%s", wire.AsError(err).Message)
	}
	q := region.Queues[name]
	if q == nil {
		return nil, "", wire.NewError(http.StatusBadRequest, "QueueDoesNotExist", "The specified queue does not exist.")
	}
	return q, "http://" + r.Host + "/" + world.AccountID + "/" + name, nil
}

// operation serves one action on the queue q, whose URL is url.
type operation func(w *state.World, q *state.Queue, in request, url string) (any, error)

func operations() map[string]operation {
	return map[string]operation{
		"GetQueueUrl": func(_ *state.World, _ *state.Queue, _ request, url string) (any, error) {
			return map[string]string{"QueueUrl": url}, nil
		},
		"SendMessage": func(w *state.World, q *state.Queue, in request, _ string) (any, error) {
			m := w.Send(q, in.MessageBody)
			return map[string]string{"MessageId": m.ID, "MD5OfMessageBody": digest(m.Body)}, nil
		},
		"ReceiveMessage": func(w *state.World, q *state.Queue, in request, _ string) (any, error) {
			if err := checkReceive(in); err != nil {
				return nil, err
			}
			return receive(w, q, in), nil
		},
		"DeleteMessage": deleteMessage,
	}
}

// Actions lists the SQS actions the handler serves, sorted.
func Actions() []string { return slices.Sorted(maps.Keys(operations())) }

// serve answers op on the queue q, whose URL is url.
func serve(w *state.World, op string, q *state.Queue, in request, url string) (any, error) {
	f, ok := operations()[op]
	if !ok {
		return nil, wire.NewError(http.StatusBadRequest, "UnsupportedOperation", "The emulator does not serve SQS %s", op)
	}
	return f(w, q, in, url)
}

// checkReceive refuses the ReceiveMessage parameters the API reference bounds, with SQS's
// message: MaxNumberOfMessages 1 to 10, WaitTimeSeconds 0 to 20, VisibilityTimeout 0 to 43200
// (12 hours, the longest visibility timeout SQS allows), each when given.
func checkReceive(in request) error {
	invalid := func(param string, v int, reason string) error {
		return wire.NewError(http.StatusBadRequest, "InvalidParameterValue",
			"Value %d for parameter %s is invalid. Reason: %s", v, param, reason)
	}
	switch {
	case in.MaxNumberOfMessages != nil && (*in.MaxNumberOfMessages < 1 || *in.MaxNumberOfMessages > 10):
		return invalid("MaxNumberOfMessages", *in.MaxNumberOfMessages, "Must be between 1 and 10, if provided.")
	case in.WaitTimeSeconds < 0 || time.Duration(in.WaitTimeSeconds)*time.Second > MaxWaitTime:
		return invalid("WaitTimeSeconds", in.WaitTimeSeconds, "Must be >= 0 and <= 20, if provided.")
	case in.VisibilityTimeout != nil && (*in.VisibilityTimeout < 0 || *in.VisibilityTimeout > maxVisibilityTimeout):
		return invalid("VisibilityTimeout", *in.VisibilityTimeout, "Must be >= 0 and <= 43200, if provided.")
	}
	return nil
}

// maxVisibilityTimeout is the longest visibility timeout SQS allows, in seconds (12 hours).
const maxVisibilityTimeout = 43200

func deleteMessage(_ *state.World, q *state.Queue, in request, _ string) (any, error) {
	if !strings.HasPrefix(in.ReceiptHandle, "rh-") {
		return nil, wire.NewError(http.StatusBadRequest, "ReceiptHandleIsInvalid", "The input receipt handle \"%s\" is not a valid receipt handle.", in.ReceiptHandle)
	}
	for i, m := range q.Messages {
		if m.ReceiptHandle == in.ReceiptHandle {
			q.Messages = append(q.Messages[:i], q.Messages[i+1:]...)
			break
		}
	}
	return map[string]string{}, nil
}

func receive(w *state.World, q *state.Queue, in request) map[string][]message {
	limit := 1 // SQS's default; checkReceive has refused a MaxNumberOfMessages outside 1 to 10
	if in.MaxNumberOfMessages != nil {
		limit = *in.MaxNumberOfMessages
	}
	visibility := DefaultVisibilityTimeout
	if in.VisibilityTimeout != nil {
		visibility = time.Duration(*in.VisibilityTimeout) * time.Second
	}
	out := []message{}
	for _, m := range q.Messages {
		if len(out) == limit {
			break
		}
		if m.VisibleAt.After(w.Now) {
			continue
		}
		m.ReceiveCount++
		m.VisibleAt = w.Now.Add(visibility)
		m.ReceiptHandle = w.NewID("rh") + "-" + m.ID
		out = append(out, message{MessageID: m.ID, ReceiptHandle: m.ReceiptHandle, MD5OfBody: digest(m.Body), Body: m.Body,
			Attributes: map[string]string{"SentTimestamp": itoa(m.SentAt.UnixMilli()), "ApproximateReceiveCount": itoa(int64(m.ReceiveCount))}})
	}
	return map[string][]message{"Messages": out}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
