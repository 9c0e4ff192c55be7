package pricing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
	"k8s.io/utils/clock"
)

// Refresh intervals: on-demand prices change rarely, spot prices hourly at most.
const (
	OnDemandRefreshInterval = 12 * time.Hour
	SpotRefreshInterval     = 15 * time.Minute
)

// API is the Price List API call the provider makes; *pricing.Client satisfies it.
type API interface {
	GetProducts(ctx context.Context, in *pricing.GetProductsInput, opts ...func(*pricing.Options)) (*pricing.GetProductsOutput, error)
}

// EC2API is the EC2 call the provider makes; *ec2.Client satisfies it.
type EC2API interface {
	DescribeSpotPriceHistory(ctx context.Context, in *ec2.DescribeSpotPriceHistoryInput, opts ...func(*ec2.Options)) (*ec2.DescribeSpotPriceHistoryOutput, error)
}

// Provider holds the prices of one region. It is safe for concurrent use.
type Provider struct {
	pricing API
	ec2     EC2API
	region  string
	clock   clock.PassiveClock

	// refresh serialises refreshes; mu guards the maps and times.
	refresh    sync.Mutex
	mu         sync.RWMutex
	onDemand   map[string]float64
	spot       map[string]map[string]float64 // instance type → zone → price
	onDemandAt time.Time
	spotAt     time.Time
	// seq counts the refreshes that replaced prices (SeqNum).
	seq uint64
}

// NewProvider returns a provider for region with no prices yet: call Refresh.
func NewProvider(pricingAPI API, ec2API EC2API, region string, clk clock.PassiveClock) *Provider {
	return &Provider{pricing: pricingAPI, ec2: ec2API, region: region, clock: clk,
		onDemand: map[string]float64{}, spot: map[string]map[string]float64{}}
}

// Refresh re-reads whichever prices are older than their interval (or never read). A failed
// source keeps its previous prices and is tried again on the next call; the errors are joined.
func (p *Provider) Refresh(ctx context.Context) error {
	p.refresh.Lock()
	defer p.refresh.Unlock()
	now := p.clock.Now()
	p.mu.RLock()
	onDemandDue := p.onDemandAt.IsZero() || now.Sub(p.onDemandAt) >= OnDemandRefreshInterval
	spotDue := p.spotAt.IsZero() || now.Sub(p.spotAt) >= SpotRefreshInterval
	p.mu.RUnlock()
	var errs []error
	if onDemandDue {
		prices, err := p.readOnDemand(ctx)
		if err != nil {
			errs = append(errs, err)
		} else {
			p.mu.Lock()
			p.onDemand, p.onDemandAt = prices, now
			p.seq++
			p.mu.Unlock()
		}
	}
	if spotDue {
		prices, err := p.readSpot(ctx, now)
		if err != nil {
			errs = append(errs, err)
		} else {
			p.mu.Lock()
			p.spot, p.spotAt = prices, now
			p.seq++
			p.mu.Unlock()
		}
	}
	return errors.Join(errs...)
}

// SeqNum changes whenever Refresh replaced prices, so that what was computed from them can be
// cached until then.
func (p *Provider) SeqNum() uint64 {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.seq
}

// OnDemand returns the on-demand hourly price of the instance type, if known.
func (p *Provider) OnDemand(instanceType string) (float64, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	price, ok := p.onDemand[instanceType]
	return price, ok
}

// Spot returns the current spot hourly price of the instance type in the zone, if known.
func (p *Provider) Spot(instanceType, zone string) (float64, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	price, ok := p.spot[instanceType][zone]
	return price, ok
}

// onDemandQueries are the Price List product families an instance type's Linux on-demand price
// is under: virtualised types as "Compute Instance" with Shared tenancy, bare-metal types as
// "Compute Instance (bare metal)" with Dedicated tenancy (a metal instance has the host to
// itself). Upstream Karpenter reads the same two.
var onDemandQueries = [][2]string{{"Compute Instance", "Shared"}, {"Compute Instance (bare metal)", "Dedicated"}}

// readOnDemand reads every Linux on-demand price of the region, of both product families.
func (p *Provider) readOnDemand(ctx context.Context) (map[string]float64, error) {
	filter := func(field, value string) pricingtypes.Filter {
		return pricingtypes.Filter{Field: aws.String(field), Value: aws.String(value), Type: pricingtypes.FilterTypeTermMatch}
	}
	out := map[string]float64{}
	for _, q := range onDemandQueries {
		in := &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"), Filters: []pricingtypes.Filter{
			filter("regionCode", p.region), filter("operatingSystem", "Linux"), filter("productFamily", q[0]), filter("tenancy", q[1]),
			filter("preInstalledSw", "NA"), filter("capacitystatus", "Used"),
		}}
		pages := pricing.NewGetProductsPaginator(p.pricing, in)
		for pages.HasMorePages() {
			page, err := pages.NextPage(ctx)
			if err != nil {
				return nil, fmt.Errorf("reading on-demand prices (%s), %w", q[0], err)
			}
			for _, doc := range page.PriceList {
				name, price, err := parseProduct(doc)
				if err != nil {
					return nil, fmt.Errorf("reading on-demand prices, %w", err)
				}
				if name != "" && price > 0 {
					out[name] = price
				}
			}
		}
	}
	return out, nil
}

// product is the part of a Price List aws_v1 document the provider reads.
type product struct {
	Product struct {
		Attributes struct {
			InstanceType string `json:"instanceType"`
		} `json:"attributes"`
	} `json:"product"`
	Terms struct {
		OnDemand map[string]struct {
			PriceDimensions map[string]struct {
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

// parseProduct returns the instance type and USD hourly price of one price list document.
func parseProduct(doc string) (string, float64, error) {
	var prod product
	if err := json.Unmarshal([]byte(doc), &prod); err != nil {
		return "", 0, fmt.Errorf("parsing price list document, %w", err)
	}
	for _, term := range prod.Terms.OnDemand {
		for _, dim := range term.PriceDimensions {
			usd, ok := dim.PricePerUnit["USD"]
			if !ok {
				continue
			}
			price, err := strconv.ParseFloat(usd, 64)
			if err != nil {
				return "", 0, fmt.Errorf("price of %s: %q, %w", prod.Product.Attributes.InstanceType, usd, err)
			}
			return prod.Product.Attributes.InstanceType, price, nil
		}
	}
	return prod.Product.Attributes.InstanceType, 0, nil
}

// readSpot reads the current Linux spot price of every instance type and zone: the newest point
// of each pool's history since now.
func (p *Provider) readSpot(ctx context.Context, now time.Time) (map[string]map[string]float64, error) {
	in := &ec2.DescribeSpotPriceHistoryInput{
		ProductDescriptions: []string{"Linux/UNIX", "Linux/UNIX (Amazon VPC)"},
		StartTime:           aws.Time(now),
	}
	out := map[string]map[string]float64{}
	stamps := map[[2]string]time.Time{}
	pages := ec2.NewDescribeSpotPriceHistoryPaginator(p.ec2, in)
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("reading spot prices, %w", err)
		}
		for _, sp := range page.SpotPriceHistory {
			if err := addSpot(out, stamps, sp); err != nil {
				return nil, fmt.Errorf("reading spot prices, %w", err)
			}
		}
	}
	return out, nil
}

func addSpot(out map[string]map[string]float64, stamps map[[2]string]time.Time, sp ec2types.SpotPrice) error {
	it, zone := string(sp.InstanceType), aws.ToString(sp.AvailabilityZone)
	price, err := strconv.ParseFloat(aws.ToString(sp.SpotPrice), 64)
	if err != nil {
		return fmt.Errorf("spot price of %s in %s: %q, %w", it, zone, aws.ToString(sp.SpotPrice), err)
	}
	key := [2]string{it, zone}
	at := aws.ToTime(sp.Timestamp)
	if prev, ok := stamps[key]; ok && !at.After(prev) {
		return nil
	}
	stamps[key] = at
	if out[it] == nil {
		out[it] = map[string]float64{}
	}
	out[it][zone] = price
	return nil
}

// Estimate is the built-in hourly on-demand price of an instance type neither source priced:
// $0.0336 per vCPU plus $0.0045 per GiB of memory, close to the general-purpose families' list
// prices (m5.large: 2 × 0.0336 + 8 × 0.0045 = $0.1032, listed at $0.096). It only orders such
// types among others; it is not a bill.
func Estimate(vcpus, memoryMiB int64) float64 {
	return 0.0336*float64(vcpus) + 0.0045*float64(memoryMiB)/1024
}
