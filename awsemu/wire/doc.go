// Package wire holds the AWS wire formats the emulator's services share: reading a query-protocol
// form (EC2's flat lists `Name.N`, the AWS query `Name.member.N` lists, filters and tags), writing
// XML responses, the EC2 and AWS-query error envelopes, opaque pagination tokens, and EC2's
// wildcard matching for filter values.
//
// It knows no operation and no state: services decode their own inputs with it and encode their
// own response structs.
package wire
