package interruption

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Receive settings, as Karpenter's: up to 10 messages a call, a 20s long poll (the most SQS
// allows), and 20s in flight before a message that was not deleted is received again.
const (
	maxMessages       = 10
	waitTimeSeconds   = 20
	visibilityTimeout = 20
)

// SQSAPI is the SQS calls the controller makes; *sqs.Client satisfies it.
type SQSAPI interface {
	GetQueueUrl(ctx context.Context, in *sqs.GetQueueUrlInput, opts ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, opts ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, opts ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
}

var _ SQSAPI = (*sqs.Client)(nil)

// Queue receives and deletes the messages of one SQS queue named by the operator. Its URL is
// looked up on first use and kept. Errors are returned, never retried here: the SDK retries
// throttling and transient failures, the controller's loop the rest.
type Queue struct {
	api  SQSAPI
	name string

	mu  sync.Mutex
	url string
}

// NewQueue returns the queue called name, read through api.
func NewQueue(api SQSAPI, name string) *Queue { return &Queue{api: api, name: name} }

// Name is the queue's name.
func (q *Queue) Name() string { return q.name }

// URL returns the queue's URL, looking it up with GetQueueUrl the first time.
func (q *Queue) URL(ctx context.Context) (string, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.url != "" {
		return q.url, nil
	}
	out, err := q.api.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(q.name)})
	if err != nil {
		if _, ok := errors.AsType[*sqstypes.QueueDoesNotExist](err); ok {
			return "", fmt.Errorf("interruption queue %s does not exist: create it as the EventBridge rules' target, or fix --interruption-queue, %w", q.name, err)
		}
		return "", fmt.Errorf("getting the URL of interruption queue %s, %w", q.name, err)
	}
	q.url = aws.ToString(out.QueueUrl)
	return q.url, nil
}

// Receive waits up to 20s for messages and returns up to 10; none when the wait ends empty.
func (q *Queue) Receive(ctx context.Context) ([]sqstypes.Message, error) {
	url, err := q.URL(ctx)
	if err != nil {
		return nil, err
	}
	out, err := q.api.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(url), MaxNumberOfMessages: maxMessages, WaitTimeSeconds: waitTimeSeconds,
		VisibilityTimeout:           visibilityTimeout,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameSentTimestamp},
	})
	if err != nil {
		return nil, fmt.Errorf("receiving from interruption queue %s, %w", q.name, err)
	}
	return out.Messages, nil
}

// Delete deletes a received message.
func (q *Queue) Delete(ctx context.Context, m sqstypes.Message) error {
	url, err := q.URL(ctx)
	if err != nil {
		return err
	}
	if _, err := q.api.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
		return fmt.Errorf("deleting message %s from interruption queue %s, %w", aws.ToString(m.MessageId), q.name, err)
	}
	return nil
}

// sentAt is when SQS received the message (its SentTimestamp attribute), or false.
func sentAt(m sqstypes.Message) (time.Time, bool) {
	ms, err := strconv.ParseInt(m.Attributes[string(sqstypes.MessageSystemAttributeNameSentTimestamp)], 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(ms), true
}
