// Package sqs emulates the SQS JSON 1.0 operations an interruption controller uses: GetQueueUrl,
// SendMessage, ReceiveMessage (with visibility timeouts on the injected clock) and DeleteMessage.
// Queues hold the EventBridge-shaped EC2 events state.World.Event sends.
//
// ReceiveMessage long polls as SQS does: with WaitTimeSeconds (at most 20) and nothing visible,
// it waits on the injected clock until a message arrives or becomes visible again, or the wait
// ends, and answers then. It must not hold the world's lock while it waits.
package sqs
