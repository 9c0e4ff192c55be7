package sqs

import (
	"crypto/md5" // SQS's own body digest is MD5, and the SDK checks it
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
)

// DefaultVisibilityTimeout hides a received message for this long unless the request says
// otherwise.
const DefaultVisibilityTimeout = 30 * time.Second

// Handler serves SQS over a State.
type Handler struct {
	state *state.State
}

// New returns the SQS handler over st.
func New(st *state.State) *Handler { return &Handler{state: st} }

type request struct {
	QueueName           string `json:"QueueName"`
	QueueURL            string `json:"QueueUrl"`
	MessageBody         string `json:"MessageBody"`
	ReceiptHandle       string `json:"ReceiptHandle"`
	MaxNumberOfMessages int    `json:"MaxNumberOfMessages"`
	VisibilityTimeout   *int   `json:"VisibilityTimeout"`
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

// Serve answers one SQS request from the caller in call.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, call wire.Call) {
	var out any
	err := h.state.Update(func(world *state.World) error {
		p, err := authz.Identify(world, call)
		if err != nil {
			return wire.NewError(http.StatusBadRequest, "InvalidClientTokenId", "The security token included in the request is invalid.")
		}
		region, err := world.Region(call.Region)
		if err != nil {
			return wire.NewError(http.StatusBadRequest, "InvalidAddress", "%v", err)
		}
		var in request
		if err := wire.DecodeJSON(r, &in); err != nil {
			return err
		}
		op := wire.Target(r)
		name := in.QueueName
		if in.QueueURL != "" {
			name = in.QueueURL[strings.LastIndex(in.QueueURL, "/")+1:]
		}
		queueARN := "arn:aws:sqs:" + region.Name + ":" + world.AccountID + ":" + name
		if err := authz.Authorize(world, p, authz.IAM, policy.Request{Action: "sqs:" + op, Resource: queueARN}); err != nil {
			return wire.NewError(http.StatusBadRequest, "AccessDenied", "%s", wire.AsError(err).Message)
		}
		q := region.Queues[name]
		if q == nil {
			return wire.NewError(http.StatusBadRequest, "QueueDoesNotExist", "The specified queue does not exist.")
		}
		out, err = serve(world, op, q, in, "http://"+r.Host+"/"+world.AccountID+"/"+name)
		return err
	})
	if err != nil {
		wire.WriteJSONError(w, call.RequestID, err)
		return
	}
	wire.WriteJSON(w, call.RequestID, out)
}

func serve(w *state.World, op string, q *state.Queue, in request, url string) (any, error) {
	switch op {
	case "GetQueueUrl":
		return map[string]string{"QueueUrl": url}, nil
	case "SendMessage":
		m := w.Send(q, in.MessageBody)
		return map[string]string{"MessageId": m.ID, "MD5OfMessageBody": digest(m.Body)}, nil
	case "ReceiveMessage":
		return receive(w, q, in), nil
	case "DeleteMessage":
		if !strings.HasPrefix(in.ReceiptHandle, "rh-") {
			return nil, wire.NewError(http.StatusBadRequest, "ReceiptHandleIsInvalid", "The input receipt handle \"%s\" is not a valid receipt handle.", in.ReceiptHandle)
		}
		// As in SQS, a handle from an earlier receive succeeds without deleting the message.
		for i, m := range q.Messages {
			if m.ReceiptHandle == in.ReceiptHandle {
				q.Messages = append(q.Messages[:i], q.Messages[i+1:]...)
				break
			}
		}
		return map[string]string{}, nil
	}
	return nil, wire.NewError(http.StatusBadRequest, "UnsupportedOperation", "The emulator does not serve SQS %s", op)
}

func receive(w *state.World, q *state.Queue, in request) map[string][]message {
	limit := in.MaxNumberOfMessages
	if limit < 1 || limit > 10 {
		limit = 1
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
