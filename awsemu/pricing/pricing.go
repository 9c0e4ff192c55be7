package pricing

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/joinerhq/joiner/awsemu/authz"
	"github.com/joinerhq/joiner/awsemu/policy"
	"github.com/joinerhq/joiner/awsemu/state"
	"github.com/joinerhq/joiner/awsemu/wire"
	"github.com/joinerhq/joiner/pkg/catalog"
)

// Handler serves GetProducts over a State.
type Handler struct {
	state *state.State
}

// New returns the pricing handler over st.
func New(st *state.State) *Handler { return &Handler{state: st} }

type filter struct {
	Type  string `json:"Type"`
	Field string `json:"Field"`
	Value string `json:"Value"`
}

type getProductsInput struct {
	ServiceCode   string   `json:"ServiceCode"`
	Filters       []filter `json:"Filters"`
	FormatVersion string   `json:"FormatVersion"`
	NextToken     string   `json:"NextToken"`
	MaxResults    *int     `json:"MaxResults"`
}

type getProductsOutput struct {
	FormatVersion string   `json:"FormatVersion"`
	PriceList     []string `json:"PriceList"`
	NextToken     string   `json:"NextToken,omitempty"`
}

// location is the Price List's name for a region of the catalogue, or the region's code for one
// it does not cover.
func location(cat *catalog.Catalog, region string) string {
	if r, ok := cat.Region(region); ok && r.Location != "" {
		return r.Location
	}
	return region
}

// Serve answers one Price List request from the caller in call.
func (h *Handler) Serve(w http.ResponseWriter, r *http.Request, call wire.Call) {
	var out getProductsOutput
	err := h.state.Update(func(world *state.World) error {
		p, err := authz.Identify(world, call)
		if err != nil {
			return wire.NewError(http.StatusBadRequest, "UnrecognizedClientException", "The security token included in the request is invalid.")
		}
		if op := wire.Target(r); !slices.Contains(Actions(), op) {
			return wire.NewError(http.StatusBadRequest, "UnknownOperationException", "The emulator does not serve Price List %s", op)
		}
		if err := authz.Authorize(world, p, authz.IAM, policy.Request{Action: "pricing:GetProducts", Resource: "*"}); err != nil {
			return wire.NewError(http.StatusBadRequest, "AccessDeniedException", "%s", wire.AsError(err).Message)
		}
		var in getProductsInput
		if err := wire.DecodeJSON(r, &in); err != nil {
			return err
		}
		if err := checkGetProducts(in); err != nil {
			return err
		}
		if in.ServiceCode != "AmazonEC2" {
			return wire.NewError(http.StatusBadRequest, "InvalidParameterException", "Input parameters are invalid. ServiceCode %q is not emulated.", in.ServiceCode)
		}
		limit := 100
		if in.MaxResults != nil {
			limit = *in.MaxResults
		}
		var matched []string
		for _, t := range world.Catalog.Types {
			for _, region := range state.SortedKeys(t.OnDemandUSD) {
				attrs := attributes(world.Catalog, t, region)
				// productFamily is the product's, not an attribute, and filters match it too.
				if !matches(in.Filters, map[string]string{"productFamily": productFamily(t)}, attrs) {
					continue
				}
				doc, err := document(t, region, attrs)
				if err != nil {
					return err
				}
				matched = append(matched, doc)
			}
		}
		start, end, next, err := wire.Page("GetProducts", len(matched), limit, in.NextToken)
		if err != nil {
			return wire.NewError(http.StatusBadRequest, "InvalidNextTokenException", "%s", wire.AsError(err).Message)
		}
		out = getProductsOutput{FormatVersion: "aws_v1", PriceList: matched[start:end], NextToken: next}
		if out.PriceList == nil {
			out.PriceList = []string{}
		}
		return nil
	})
	if err != nil {
		wire.WriteJSONError(w, call.RequestID, err)
		return
	}
	wire.WriteJSON(w, call.RequestID, out)
}

func attributes(cat *catalog.Catalog, t catalog.InstanceType, region string) map[string]string {
	a := map[string]string{
		"servicecode": "AmazonEC2", "instanceType": t.Name, "instanceFamily": "General purpose", "regionCode": region,
		"location": location(cat, region), "locationType": "AWS Region", "operatingSystem": "Linux", "tenancy": tenancy(t),
		"preInstalledSw": "NA", "capacitystatus": "Used", "marketoption": "OnDemand", "licenseModel": "No License required",
		"vcpu": strconv.Itoa(int(t.VCPU)), "memory": strconv.FormatFloat(float64(t.MemoryMiB)/1024, 'f', -1, 64) + " GiB",
		"networkPerformance": t.NetworkPerformance, "physicalProcessor": t.Manufacturer, "usagetype": "BoxUsage:" + t.Name,
		"operation": "RunInstances",
	}
	if t.GPUs != nil {
		a["gpu"] = strconv.Itoa(int(t.GPUs.Count))
	}
	return a
}

// matches applies TERM_MATCH filters; field names and values compare case-insensitively.
func matches(filters []filter, fields ...map[string]string) bool {
	for _, f := range filters {
		found := false
		for _, attrs := range fields {
			for k, v := range attrs {
				if strings.EqualFold(k, f.Field) && strings.EqualFold(v, f.Value) {
					found = true
				}
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// productFamily is the Price List's product family of an instance type: bare metal types are
// their own family (and Dedicated tenancy), as upstream Karpenter queries them.
func productFamily(t catalog.InstanceType) string {
	if t.BareMetal {
		return "Compute Instance (bare metal)"
	}
	return "Compute Instance"
}

// document is one price-list entry in the aws_v1 format, as a JSON string.
func document(t catalog.InstanceType, region string, attrs map[string]string) (string, error) {
	h := fnv.New64a()
	_, _ = h.Write([]byte(t.Name + "/" + region))
	sku := strings.ToUpper(strconv.FormatUint(h.Sum64(), 36))
	const term = "JRTCKXETXF"
	doc := map[string]any{
		"product":     map[string]any{"productFamily": productFamily(t), "attributes": attrs, "sku": sku},
		"serviceCode": "AmazonEC2",
		"terms": map[string]any{"OnDemand": map[string]any{sku + "." + term: map[string]any{
			"offerTermCode": term, "sku": sku, "effectiveDate": "2026-01-01T00:00:00Z", "termAttributes": map[string]string{},
			"priceDimensions": map[string]any{sku + "." + term + ".6YS6EN2CT7": map[string]any{
				"unit": "Hrs", "pricePerUnit": map[string]string{"USD": strconv.FormatFloat(t.OnDemandUSD[region], 'f', 10, 64)},
				"description": fmt.Sprintf("$%.4f per On Demand Linux %s Instance Hour", t.OnDemandUSD[region], t.Name),
				"rateCode":    sku + "." + term + ".6YS6EN2CT7", "beginRange": "0", "endRange": "Inf", "appliesTo": []string{},
			}},
		}}},
		"version": "20260101000000", "publicationDate": "2026-01-01T00:00:00Z",
	}
	b, err := json.Marshal(doc)
	if err != nil {
		return "", fmt.Errorf("encoding the price of %s, %w", t.Name, err)
	}
	return string(b), nil
}

// Actions lists the Price List actions the handler serves: GetProducts alone.
func Actions() []string { return []string{"GetProducts"} }

// checkGetProducts refuses what the API reference's constraints on GetProducts refuse:
// ServiceCode is required, MaxResults is 1 to 100 and Filters hold at most 50 filters.
func checkGetProducts(in getProductsInput) error {
	validation := func(format string, args ...any) error {
		return wire.NewError(http.StatusBadRequest, "ValidationException", "1 validation error detected: "+format, args...)
	}
	switch {
	case in.ServiceCode == "":
		return validation("Value null at 'serviceCode' failed to satisfy constraint: Member must not be null")
	case in.MaxResults != nil && *in.MaxResults < 1:
		return validation("Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value greater than or equal to 1", *in.MaxResults)
	case in.MaxResults != nil && *in.MaxResults > 100:
		return validation("Value '%d' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 100", *in.MaxResults)
	case len(in.Filters) > 50:
		return validation("Value at 'filters' failed to satisfy constraint: Member must have length less than or equal to 50")
	}
	return nil
}

// tenancy is the Price List's tenancy of an instance type's Linux on-demand price: Dedicated for
// bare metal, Shared otherwise.
func tenancy(t catalog.InstanceType) string {
	if t.BareMetal {
		return "Dedicated"
	}
	return "Shared"
}
