// Package inspect is the emulator's own HTTP endpoint for tests and the demo, outside every AWS
// protocol (no SigV4): GET /_awsemu/instances lists the instances with their lifecycle, capacity
// type, hourly price, instance profile, tags and console output; GET and PUT /_awsemu/faults
// read and replace the injected faults; GET /_awsemu/authorizations[?role=ARN] is the
// authorization log (every request the policies were evaluated for: principal, action,
// resource, region, allowed or denied), so a test can compare a run's calls with a policy; POST /_awsemu/events sends an EC2 event (spot
// interruption, rebalance, scheduled change, state change) about an instance to the
// interruption queues.
//
// It must not be reachable through an AWS protocol, and must not change anything but faults and
// the events it is asked to send.
package inspect
