package pricing

import (
	"fmt"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// HoursPerMonth is the month EBS bills GiB-months and IOPS-months by (AWS prices a month as 730
// hours).
const HoursPerMonth = 730

// volumePrice is the list price of one EBS volume type in US East (N. Virginia), from
// https://aws.amazon.com/ebs/pricing/ (read November 2026): per GiB-month of size, per
// provisioned IOPS-month above what is included, and per provisioned MiB/s-month of throughput
// above what is included. Other regions list within about 20% of these.
type volumePrice struct {
	gibMonth, iopsMonth, mibpsMonth float64
	freeIOPS, freeMiBps             int64
}

var volumePrices = map[string]volumePrice{
	"gp3":      {gibMonth: 0.08, iopsMonth: 0.005, mibpsMonth: 0.04, freeIOPS: 3000, freeMiBps: 125},
	"gp2":      {gibMonth: 0.10},
	"io1":      {gibMonth: 0.125, iopsMonth: 0.065},
	"io2":      {gibMonth: 0.125, iopsMonth: 0.065},
	"st1":      {gibMonth: 0.045},
	"sc1":      {gibMonth: 0.015},
	"standard": {gibMonth: 0.05},
}

// DefaultVolumeType is the type EC2 gives a block device mapping that names none.
const DefaultVolumeType = "gp2"

// VolumeHourly is what one EBS volume costs per hour at the list prices of volumePrices. A volume
// created from a snapshot without a size is priced at size 0 (the snapshot's size is not known
// here).
func VolumeHourly(d *awsv1.BlockDevice) (float64, error) {
	typ := DefaultVolumeType
	if d.VolumeType != nil {
		typ = *d.VolumeType
	}
	p, ok := volumePrices[typ]
	if !ok {
		return 0, fmt.Errorf("pricing EBS volume type %q, it is not one of gp3, gp2, io1, io2, st1, sc1, standard", typ)
	}
	month := 0.0
	if d.VolumeSize != nil {
		month += p.gibMonth * float64(d.VolumeSize.Value()) / (1 << 30)
	}
	if d.IOPS != nil && *d.IOPS > p.freeIOPS {
		month += p.iopsMonth * float64(*d.IOPS-p.freeIOPS)
	}
	if d.Throughput != nil && *d.Throughput > p.freeMiBps {
		month += p.mibpsMonth * float64(*d.Throughput-p.freeMiBps)
	}
	return month / HoursPerMonth, nil
}

// VolumesHourly is what the EBS volumes of mappings cost per hour together (mappings without
// EBS, such as instance-store ones, cost nothing extra).
func VolumesHourly(mappings []awsv1.BlockDeviceMapping) (float64, error) {
	total := 0.0
	for i, m := range mappings {
		if m.EBS == nil {
			continue
		}
		h, err := VolumeHourly(m.EBS)
		if err != nil {
			return 0, fmt.Errorf("blockDeviceMappings[%d], %w", i, err)
		}
		total += h
	}
	return total, nil
}
