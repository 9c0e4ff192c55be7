// Package launchtemplate owns the launch templates instances are created from. Today it holds
// their naming: a launch template is named by a hash of its resolved options, so equal options
// share one template and any change makes a new one. Creating them on demand, caching them and
// garbage-collecting unused ones are planned here, behind small interfaces the SDK clients
// satisfy.
//
// It must not choose the AMI, subnets or instance types; it is given them.
package launchtemplate
