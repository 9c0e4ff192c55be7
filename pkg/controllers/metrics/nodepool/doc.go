// Package nodepool keeps Karpenter's per-NodePool gauges and the cloud provider's offering
// gauges, named and labelled as Karpenter v1.15's, measured on the leader every Interval and
// served from that measurement at scrape time:
//
//   - karpenter_nodepools_usage{nodepool,resource_type}: the NodePool's status.resources;
//   - karpenter_nodepools_limit{nodepool,resource_type}: its spec.limits;
//   - karpenter_nodepools_cost_total{nodepool}: the summed hourly price, in US dollars, of its
//     launched NodeClaims, each priced at the offering (instance type, zone, capacity type from
//     its labels) the cloud provider prices now for the NodePool; a NodeClaim whose offering is
//     not priced counts nothing. As upstream, an estimate and not a bill: it leaves out what a
//     node costs beyond its instance (EBS volumes);
//   - karpenter_cloudprovider_instance_type_offering_available{instance_type,capacity_type,zone}
//     (1 or 0) and karpenter_cloudprovider_instance_type_offering_price_estimate (hourly, US
//     dollars), over the instance types of every NodePool: available when any NodePool has the
//     offering available;
//   - karpenter_cloudprovider_instance_type_cpu_cores{instance_type} and
//     karpenter_cloudprovider_instance_type_memory_bytes{instance_type}: the type's capacity.
//
// resource_type is the resource name in lower case with "-" as "_"; cpu is in cores, everything
// else in its unit. A NodePool whose instance types cannot be read (its node class not Ready)
// has usage and limit but no cost, and adds no offerings; the others are measured as usual. It
// reads the cluster and the cloud provider's instance types and writes nothing.
package nodepool
