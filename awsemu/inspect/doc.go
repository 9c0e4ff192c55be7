// Package inspect is the emulator's own HTTP endpoint for tests and the demo, outside every AWS
// protocol (no SigV4): GET /_awsemu/instances lists the instances with their lifecycle, capacity
// type, instance profile, tags and console output; GET and PUT /_awsemu/faults read and replace
// the injected faults.
//
// It must not be reachable through an AWS protocol, and must not change anything but faults.
package inspect
