package awsemu_test

import (
	"encoding/json"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	pricingtypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
)

func TestPricingGetProducts(t *testing.T) {
	e := newEnv(t)
	client := pricing.NewFromConfig(e.config(t, "us-east-1", "AKIDJOINERCONTROLLER"))
	match := func(field, value string) pricingtypes.Filter {
		return pricingtypes.Filter{Type: pricingtypes.FilterTypeTermMatch, Field: aws.String(field), Value: aws.String(value)}
	}
	var docs []string
	p := pricing.NewGetProductsPaginator(client, &pricing.GetProductsInput{
		ServiceCode: aws.String("AmazonEC2"), FormatVersion: aws.String("aws_v1"), MaxResults: aws.Int32(100),
		Filters: []pricingtypes.Filter{match("regionCode", e.region), match("operatingSystem", "Linux"), match("tenancy", "Shared"),
			match("preInstalledSw", "NA"), match("capacitystatus", "Used"), match("marketoption", "OnDemand")},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, page.PriceList...)
	}
	if len(docs) < 500 {
		t.Fatalf("got %d prices, want one per instance type", len(docs))
	}
	prices := map[string]string{}
	for _, d := range docs {
		var doc struct {
			Product struct {
				Attributes map[string]string `json:"attributes"`
			} `json:"product"`
			Terms struct {
				OnDemand map[string]struct {
					PriceDimensions map[string]struct {
						PricePerUnit map[string]string `json:"pricePerUnit"`
					} `json:"priceDimensions"`
				} `json:"OnDemand"`
			} `json:"terms"`
		}
		if err := json.Unmarshal([]byte(d), &doc); err != nil {
			t.Fatal(err)
		}
		for _, term := range doc.Terms.OnDemand {
			for _, dim := range term.PriceDimensions {
				prices[doc.Product.Attributes["instanceType"]] = dim.PricePerUnit["USD"]
			}
		}
	}
	if prices["m5.large"] != "0.0960000000" {
		t.Errorf("m5.large costs %q in %s", prices["m5.large"], e.region)
	}
	out, err := client.GetProducts(t.Context(), &pricing.GetProductsInput{ServiceCode: aws.String("AmazonEC2"),
		Filters: []pricingtypes.Filter{match("regionCode", "eu-west-1"), match("instanceType", "m5.large")}})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.PriceList) != 1 {
		t.Errorf("m5.large in eu-west-1: %d prices", len(out.PriceList))
	}
}
