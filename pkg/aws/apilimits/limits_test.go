package apilimits

import (
	"strings"
	"testing"
)

func TestRequestBucket(t *testing.T) {
	for _, tc := range []struct {
		service, action string
		want            Bucket
		ok              bool
	}{
		// Every action the emulator serves, by the category the EC2 page puts it in.
		{"ec2", "DescribeInstanceTypes", Bucket{Name: "ec2/DescribeInstanceTypes", Capacity: 100, RefillPerSecond: 20}, true},
		{"ec2", "DescribeInstanceTypeOfferings", Bucket{Name: "ec2/DescribeInstanceTypeOfferings", Capacity: 100, RefillPerSecond: 20}, true},
		{"ec2", "DescribeAvailabilityZones", Bucket{Name: "ec2/DescribeAvailabilityZones", Capacity: 100, RefillPerSecond: 20}, true},
		{"ec2", "DescribeSpotPriceHistory", Bucket{Name: "ec2/DescribeSpotPriceHistory", Capacity: 100, RefillPerSecond: 20}, true},
		{"ec2", "DescribeSubnets", Bucket{Name: "ec2/DescribeSubnets", Capacity: 100, RefillPerSecond: 20}, true},
		{"ec2", "DescribeSecurityGroups", Bucket{Name: "ec2/DescribeSecurityGroups", Capacity: 100, RefillPerSecond: 20}, true},
		{"ec2", "DescribeVpcs", Bucket{Name: "ec2/DescribeVpcs", Capacity: 100, RefillPerSecond: 20}, true},
		{"ec2", "DescribeImages", Bucket{Name: "ec2/DescribeImages", Capacity: 100, RefillPerSecond: 20}, true},
		{"ec2", "DescribeLaunchTemplates", Bucket{Name: "ec2/DescribeLaunchTemplates", Capacity: 100, RefillPerSecond: 20}, true},
		{"ec2", "DescribeInstances", Bucket{Name: "ec2/DescribeInstances", Capacity: 100, RefillPerSecond: 20}, true},
		{"ec2", "DescribeInstanceStatus", Bucket{Name: "ec2/DescribeInstanceStatus", Capacity: 100, RefillPerSecond: 20}, true},
		{"ec2", "DescribeCapacityReservations", Bucket{Name: "ec2/DescribeCapacityReservations", Capacity: 100, RefillPerSecond: 20}, true},
		{"ec2", "GetConsoleOutput", Bucket{Name: "ec2/GetConsoleOutput", Capacity: 100, RefillPerSecond: 20}, true},
		{"ec2", "CreateFleet", Bucket{Name: "ec2/CreateFleet", Capacity: 50, RefillPerSecond: 5}, true},
		{"ec2", "CreateLaunchTemplate", Bucket{Name: "ec2/CreateLaunchTemplate", Capacity: 50, RefillPerSecond: 5}, true},
		{"ec2", "DeleteLaunchTemplate", Bucket{Name: "ec2/DeleteLaunchTemplate", Capacity: 50, RefillPerSecond: 5}, true},
		{"ec2", "DeregisterImage", Bucket{Name: "ec2/DeregisterImage", Capacity: 100, RefillPerSecond: 5}, true},
		{"ec2", "CreateTags", Bucket{Name: "ec2/CreateTags", Capacity: 100, RefillPerSecond: 10}, true},
		{"ec2", "RunInstances", Bucket{Name: "ec2/RunInstances", Capacity: 5, RefillPerSecond: 2}, true},
		{"ec2", "TerminateInstances", Bucket{Name: "ec2/TerminateInstances", Capacity: 100, RefillPerSecond: 5}, true},
		{"ec2", "StartInstances", Bucket{Name: "ec2/StartInstances", Capacity: 5, RefillPerSecond: 2}, true},
		{"ec2", "StopInstances", Bucket{Name: "ec2/StopInstances", Capacity: 50, RefillPerSecond: 5}, true},
		{"ec2", "AuthorizeSecurityGroupIngress", Bucket{Name: "ec2/AuthorizeSecurityGroupIngress", Capacity: 50, RefillPerSecond: 5}, true},
		{"ec2", "AdvertiseByoipCidr", Bucket{Name: "ec2/AdvertiseByoipCidr", Capacity: 1, RefillPerSecond: 0.1}, true},
		{"ec2", "", Bucket{}, false},
		{"ssm", "GetParameter", Bucket{Name: "ssm/parameter-store-throughput", Capacity: 40, RefillPerSecond: 40}, true},
		{"ssm", "GetParameters", Bucket{Name: "ssm/parameter-store-throughput", Capacity: 40, RefillPerSecond: 40}, true},
		{"ssm", "GetParametersByPath", Bucket{Name: "ssm/parameter-store-throughput", Capacity: 40, RefillPerSecond: 40}, true},
		{"ssm", "PutParameter", Bucket{}, false},
		{"pricing", "GetProducts", Bucket{Name: "pricing/GetProducts", Capacity: 10, RefillPerSecond: 5}, true},
		{"pricing", "DescribeServices", Bucket{Name: "pricing/DescribeServices", Capacity: 10, RefillPerSecond: 5}, true},
		{"iam", "GetRole", Bucket{}, false},
		{"iam", "CreateInstanceProfile", Bucket{}, false},
		{"sts", "GetCallerIdentity", Bucket{}, false},
		{"sts", "DecodeAuthorizationMessage", Bucket{}, false},
		{"sqs", "ReceiveMessage", Bucket{}, false},
		{"eks", "DescribeCluster", Bucket{}, false},
		{"eks", "ListAccessEntries", Bucket{}, false},
		{"s3", "GetObject", Bucket{}, false},
	} {
		t.Run(tc.service+"/"+tc.action, func(t *testing.T) {
			got, ok := RequestBucket(tc.service, tc.action)
			if ok != tc.ok {
				t.Fatalf("RequestBucket(%q, %q) ok = %v, want %v", tc.service, tc.action, ok, tc.ok)
			}
			if ok && got.Source == "" {
				t.Errorf("RequestBucket(%q, %q) has no source", tc.service, tc.action)
			}
			got.Source = ""
			if got != tc.want {
				t.Errorf("RequestBucket(%q, %q) = %+v, want %+v", tc.service, tc.action, got, tc.want)
			}
		})
	}
}

func TestEC2Category(t *testing.T) {
	for action, want := range map[string]Category{
		"DescribeRouteTables":               NonMutating,
		"SearchTransitGatewayRoutes":        NonMutating,
		"GetIpamPoolCidrs":                  NonMutating,
		"ListImagesInRecycleBin":            NonMutating,
		"AllocateHosts":                     Mutating,
		"CreateFleet":                       Mutating,
		"RequestSpotInstances":              ResourceIntensive,
		"CreateKeyPair":                     ResourceIntensive,
		"RunInstances":                      Uncategorized,
		"CreateTags":                        Uncategorized,
		"GetHostReservationPurchasePreview": Uncategorized,
	} {
		if got := EC2Category(action); got != want {
			t.Errorf("EC2Category(%q) = %q, want %q", action, got, want)
		}
	}
}

func TestUnfilteredBucket(t *testing.T) {
	for _, tc := range []struct {
		service, action string
		ok              bool
	}{
		{"ec2", "DescribeInstances", true},
		{"ec2", "DescribeInstanceStatus", true},
		{"ec2", "DescribeSecurityGroups", true},
		{"ec2", "DescribeVolumes", true},
		{"ec2", "DescribeSubnets", false},
		{"ec2", "CreateFleet", false},
		{"ssm", "DescribeInstances", false},
	} {
		got, ok := UnfilteredBucket(tc.service, tc.action)
		if ok != tc.ok {
			t.Errorf("UnfilteredBucket(%q, %q) ok = %v, want %v", tc.service, tc.action, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		filtered, _ := RequestBucket(tc.service, tc.action)
		if got.Capacity != 50 || got.RefillPerSecond != 10 || got.Name == filtered.Name {
			t.Errorf("UnfilteredBucket(%q, %q) = %+v, want 50 refilled 10/s apart from %s", tc.service, tc.action, got, filtered.Name)
		}
	}
}

func TestResourceBucket(t *testing.T) {
	for _, tc := range []struct {
		service, action string
		want            Bucket
		ok              bool
	}{
		{"ec2", "RunInstances", Bucket{Name: "ec2/RunInstances/instances", Capacity: 1000, RefillPerSecond: 2}, true},
		{"ec2", "TerminateInstances", Bucket{Name: "ec2/TerminateInstances/instances", Capacity: 1000, RefillPerSecond: 20}, true},
		{"ec2", "StartInstances", Bucket{Name: "ec2/StartInstances/instances", Capacity: 1000, RefillPerSecond: 2}, true},
		{"ec2", "StopInstances", Bucket{Name: "ec2/StopInstances/instances", Capacity: 1000, RefillPerSecond: 20}, true},
		// The page's resource table lists the four actions above only.
		{"ec2", "CreateFleet", Bucket{}, false},
		{"ec2", "DescribeInstances", Bucket{}, false},
		{"ssm", "RunInstances", Bucket{}, false},
	} {
		got, ok := ResourceBucket(tc.service, tc.action)
		if ok != tc.ok {
			t.Errorf("ResourceBucket(%q, %q) ok = %v, want %v", tc.service, tc.action, ok, tc.ok)
			continue
		}
		if ok && !strings.Contains(got.Source, "ec2-api-throttling") {
			t.Errorf("ResourceBucket(%q, %q) source = %q", tc.service, tc.action, got.Source)
		}
		got.Source = ""
		if got != tc.want {
			t.Errorf("ResourceBucket(%q, %q) = %+v, want %+v", tc.service, tc.action, got, tc.want)
		}
	}
}

// TestUncategorizedTable: every row of the page's uncategorized table is a positive bucket and no
// action is in two categories.
func TestUncategorizedTable(t *testing.T) {
	if len(ec2Uncategorized) != 121 {
		t.Errorf("%d uncategorized actions, the page lists 121", len(ec2Uncategorized))
	}
	for action, r := range ec2Uncategorized {
		if r.capacity <= 0 || r.refill <= 0 {
			t.Errorf("%s: capacity %v, refill %v", action, r.capacity, r.refill)
		}
		if ec2ResourceIntensive[action] || ec2Unfiltered[action] {
			t.Errorf("%s is uncategorized and in another category", action)
		}
	}
}
