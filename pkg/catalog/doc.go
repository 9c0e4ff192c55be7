// Package catalog is the instance-type catalogue the AWS emulator serves and product code (such as
// `joiner simulate`) plans with when it has no AWS account to ask: every instance type with the facts
// DescribeInstanceTypes reports (vCPU, memory, architecture, hypervisor, ENI limits, GPUs, local
// storage), where each type is offered (sixteen regions with their zones and zone ids, with
// realistic gaps: families not launched in every region, legacy zones, rarer sizes), and what it
// costs (on-demand per region, spot per zone, moving with time).
//
// The data lives in catalog.json, written by the generator in ./gen from facts kept in Go and
// checked in; Load parses it once per call and returns an immutable Catalog. It sits outside awsemu
// so that product code, which must not import the emulator, can use it: it must not depend on the
// emulator's state or speak any protocol.
package catalog
