package ami

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	awsv1 "github.com/joinerhq/joiner/pkg/apis/aws/v1"
)

// Image is a candidate AMI, as DescribeImages (and the alias parameter it came from) describe it.
type Image struct {
	ID           string
	Name         string
	CreationDate time.Time
	Deprecated   bool
	// Architecture is the kubernetes.io/arch value of the image.
	Architecture string
	// Requirements are what an instance type must meet to boot it (see Parameter).
	Requirements []corev1.NodeSelectorRequirement
}

// Select keeps, for each distinct set of requirements, the newest non-deprecated image, or the
// newest deprecated one when all are deprecated (so nodes still launch, and drift moves them
// once a replacement appears). The result is what status.amis lists, newest first, then by ID.
func Select(images []Image) []awsv1.AMI {
	best := map[string]Image{}
	for _, img := range images {
		key := requirementsKey(img.Requirements)
		cur, ok := best[key]
		if !ok || better(img, cur) {
			best[key] = img
		}
	}
	chosen := make([]Image, 0, len(best))
	for _, img := range best {
		chosen = append(chosen, img)
	}
	slices.SortFunc(chosen, func(a, b Image) int {
		return cmp.Or(b.CreationDate.Compare(a.CreationDate), cmp.Compare(a.ID, b.ID))
	})
	out := make([]awsv1.AMI, 0, len(chosen))
	for _, img := range chosen {
		out = append(out, awsv1.AMI{ID: img.ID, Name: img.Name, Deprecated: img.Deprecated, Requirements: img.Requirements})
	}
	return out
}

// better reports whether a should be chosen over b: not deprecated beats deprecated, then newer,
// then the smaller ID, so the choice is stable.
func better(a, b Image) bool {
	if a.Deprecated != b.Deprecated {
		return !a.Deprecated
	}
	if !a.CreationDate.Equal(b.CreationDate) {
		return a.CreationDate.After(b.CreationDate)
	}
	return a.ID < b.ID
}

// requirementsKey identifies a set of requirements regardless of order.
func requirementsKey(reqs []corev1.NodeSelectorRequirement) string {
	parts := make([]string, 0, len(reqs))
	for _, r := range reqs {
		values := slices.Sorted(slices.Values(r.Values))
		b, _ := json.Marshal([]any{r.Key, r.Operator, values})
		parts = append(parts, string(b))
	}
	slices.Sort(parts)
	b, _ := json.Marshal(parts)
	return string(b)
}
