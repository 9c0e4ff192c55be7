package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// widgetCRD is a CRD with one of each kind of check, and a status whose checks must be left out.
const widgetCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, listKind: WidgetList, singular: widget}
  scope: Cluster
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        required: [spec]
        properties:
          spec:
            type: object
            required: [size]
            x-kubernetes-validations:
            - rule: has(self.size) == has(oldSelf.size)
              message: size is fixed
              fieldPath: .size
              reason: FieldValueForbidden
            properties:
              size:
                type: integer
                format: int32
                minimum: 1
                maximum: 10
                exclusiveMaximum: true
                default: 3
              mode:
                type: string
                enum: [Fast, Slow]
              tags:
                type: object
                maxProperties: 20
                additionalProperties:
                  type: string
                  pattern: ^[a-z|]+$
              terms:
                type: array
                maxItems: 30
                items:
                  type: object
                  x-kubernetes-validations:
                  - rule: "self.name != ''"
                    messageExpression: "'term ' + self.name + ' is empty'"
                  properties:
                    name: {type: string, maxLength: 63}
              quantity:
                anyOf: [{type: integer}, {type: string}]
                x-kubernetes-int-or-string: true
          status:
            type: object
            properties:
              ready: {type: string, enum: ["True", "False"]}
`

func loadString(t *testing.T, s string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict([]byte(s), crd); err != nil {
		t.Fatal(err)
	}
	return crd
}

func TestRulesOf(t *testing.T) {
	got, err := rulesOf(loadString(t, widgetCRD))
	if err != nil {
		t.Fatal(err)
	}
	want := []rule{
		{Path: ".", Check: "required", Rule: "spec"},
		{Path: ".spec", Check: "required", Rule: "size"},
		{Path: ".spec", Check: "CEL", Rule: "has(self.size) == has(oldSelf.size)", Message: "size is fixed [field .size] [reason FieldValueForbidden]"},
		{Path: ".spec.mode", Check: "enum", Rule: "Fast, Slow"},
		{Path: ".spec.quantity", Check: "anyOf", Rule: "type integer or string"},
		{Path: ".spec.size", Check: "format", Rule: "int32"},
		{Path: ".spec.size", Check: "minimum", Rule: "1"},
		{Path: ".spec.size", Check: "exclusiveMaximum", Rule: "10"},
		{Path: ".spec.size", Check: "default", Rule: "3"},
		{Path: ".spec.tags", Check: "maxProperties", Rule: "20"},
		{Path: ".spec.tags{*}", Check: "pattern", Rule: "^[a-z|]+$"},
		{Path: ".spec.terms", Check: "maxItems", Rule: "30"},
		{Path: ".spec.terms[*]", Check: "CEL", Rule: "self.name != ''", Message: "(expression) 'term ' + self.name + ' is empty'"},
		{Path: ".spec.terms[*].name", Check: "maxLength", Rule: "63"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
}

func TestRulesOfRefusesWhatItCannotPrint(t *testing.T) {
	tests := []struct {
		name, replace, with, wantErr string
	}{
		{"oneOf", "maxItems: 30", "oneOf: [{required: [a]}, {required: [b]}]", ".spec.terms: allOf, oneOf and not"},
		{"anyOf beyond types", "anyOf: [{type: integer}, {type: string}]", "anyOf: [{type: integer, minimum: 1}, {type: string}]", ".spec.quantity: anyOf with more than types"},
		{"no storage version", "storage: true", "storage: false", "no storage version"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(widgetCRD, tt.replace) {
				t.Fatalf("the fixture lacks %q", tt.replace)
			}
			_, err := rulesOf(loadString(t, strings.Replace(widgetCRD, tt.replace, tt.with, 1)))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestTableEscapes(t *testing.T) {
	got := table([]rule{{Path: ".spec.a", Check: "CEL", Rule: "self.matches('^a|b$') && self != '`'", Message: "a or\nb"}})
	want := "| path | check | rule | message |\n| --- | --- | --- | --- |\n" +
		"| `.spec.a` | CEL | ``self.matches('^a\\|b$') && self != '`'`` | `a or b` |\n"
	if got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
}

func TestRenderNeedsEveryKind(t *testing.T) {
	crds := map[string]crdFile{"Widget": {path: "w.yaml", crd: loadString(t, widgetCRD)}}
	if _, err := render("no tables here\n", "t.tmpl", crds); err == nil || !strings.Contains(err.Error(), "no {{rules}} for Widget") {
		t.Errorf("error = %v, want one naming Widget", err)
	}
	if _, err := render(`{{rules "Gadget"}}`, "t.tmpl", crds); err == nil || !strings.Contains(err.Error(), "no CRD of kind Gadget") {
		t.Errorf("error = %v, want one naming Gadget", err)
	}
	page, err := render(`# {{group "Widget"}}`+"\n"+`{{rules "Widget"}}`, "t.tmpl", crds)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "# example.com\n| path |") || !strings.Contains(string(page), "Generated by hack/apicompat") {
		t.Errorf("page:\n%s", page)
	}
}

// TestPageIsCurrent fails when docs/api-compatibility.md is not what the template and the CRDs
// make: run make generate. (make verify checks the same; this catches it in go test.)
func TestPageIsCurrent(t *testing.T) {
	root := filepath.Join("..", "..")
	paths, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	if err != nil || len(paths) != 3 {
		t.Fatalf("CRDs: %v (err %v), want the three of config/crd/bases", paths, err)
	}
	crds, err := loadCRDs(paths)
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := os.ReadFile(filepath.Join(root, "docs", "api-compatibility.md.tmpl"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := render(string(tmpl), "docs/api-compatibility.md.tmpl", crds)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(root, "docs", "api-compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("docs/api-compatibility.md is stale; run make generate (-want +got):\n%s", diff)
	}
}
