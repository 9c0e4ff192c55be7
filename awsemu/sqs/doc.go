// Package sqs emulates the SQS JSON 1.0 operations an interruption controller uses: GetQueueUrl,
// SendMessage, ReceiveMessage (with visibility timeouts on the injected clock) and DeleteMessage.
// Queues hold the EventBridge-shaped EC2 events state.World.Event sends.
//
// It must not block: WaitTimeSeconds long polling answers at once with what is visible.
package sqs
