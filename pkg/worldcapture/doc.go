// Package worldcapture reads the world of a real AWS account, read-only, and writes it as a world
// file (awsemu/world) that the emulator seeds: the EKS cluster and its VPC, the access entries and
// the roles and users of the account they name, the node roles and their instance profiles, the subnets, security groups and custom AMIs the
// EC2NodeClasses select (resolved with the controller's own selector filters), the controller's
// role with its policies merged into one document, and the interruption queue.
//
// It owns the list of read-only actions a capture makes (Actions), which `joiner iam-policy
// --capture` grants, and the rules by which AWS's answers become world fields: what EKS or the
// emulator assigns by default (node entries' usernames and groups, a STANDARD entry's
// assumed-role username) is left out, so that seeding the file assigns it again. What it cannot
// read it reports as a Note naming the action to grant, and it still returns what it could read;
// what the world file cannot represent it reports too. It never reads or writes a secret: the
// world's controllerAccessKeyId is left to the emulator.
//
// Discover reads what only the live cluster knows (the EC2NodeClasses, the controller's
// ServiceAccount and settings); without it, Capture takes the cluster VPC's subnets and security
// groups, the account's own images and the roles it is given.
package worldcapture
