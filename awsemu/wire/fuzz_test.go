package wire

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzForm decodes arbitrary query-protocol bodies and query strings: parsing never panics, a
// rejection is an error with a message, and the list readers stop at the first missing index.
func FuzzForm(f *testing.F) {
	f.Add("Action=DescribeInstances&Filter.1.Name=tag%3Ak&Filter.1.Value.1=v*&MaxResults=5", "Version=2016-11-15")
	f.Add("Action=RunInstances&TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=a&TagSpecification.1.Tag.1.Value=b&TagSpecification.3.Tag.1.Key=c", "")
	f.Add("a=%zz&b", "c=;d")
	f.Add("Roles.member.1=r&Roles.member.2.x=y&MaxResults=99999999999999999999", "MaxResults=-1")
	f.Fuzz(func(t *testing.T, body, query string) {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.URL.RawQuery = query
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		form, err := ParseForm(r)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		for _, flt := range form.Filters() {
			_ = flt.Match([]string{"v", ""})
		}
		for _, ts := range form.TagSpecifications("TagSpecification") {
			_ = ts.Tags
		}
		if list := form.List("Roles.member"); len(list) > len(form.values) {
			t.Fatalf("%d list items from %d keys", len(list), len(form.values))
		}
		_ = form.Bool("DryRun")
		_ = form.Float("SpotPrice", 0)
		if _, err := form.Int("MaxResults", 0); err != nil && AsError(err) == nil {
			t.Fatalf("Int error %v is not an AWS error", err)
		}
	})
}

// FuzzPage pages arbitrary lists with arbitrary tokens: the window is always within the list, a
// bad token is InvalidNextToken, and following tokens visits every item once.
func FuzzPage(f *testing.F) {
	f.Add("DescribeInstances", 10, 3, "")
	f.Add("DescribeInstances", 10, 3, "RGVzY3JpYmVJbnN0YW5jZXM6Mw")
	f.Add("ListRoles", 0, 0, "!!")
	f.Add("x", 5, 9223372036854775807, "eDox")
	f.Fuzz(func(t *testing.T, scope string, n, maxResults int, token string) {
		if n < 0 || n > 10_000 {
			return
		}
		start, end, next, err := Page(scope, n, maxResults, token)
		if err != nil {
			if e := AsError(err); e == nil || e.Code != "InvalidNextToken" {
				t.Fatalf("token error %v is not InvalidNextToken", err)
			}
			return
		}
		if start < 0 || start > end || end > n {
			t.Fatalf("window [%d, %d) of %d items", start, end, n)
		}
		seen := end - start
		for pages := 0; next != "" && pages <= n; pages++ {
			if start, end, next, err = Page(scope, n, maxResults, next); err != nil {
				t.Fatalf("following our own token: %v", err)
			}
			if start < 0 || start > end || end > n {
				t.Fatalf("window [%d, %d) of %d items", start, end, n)
			}
			seen += end - start
		}
		if next != "" {
			t.Fatalf("paging %d items never ended", n)
		}
		if first, _, _, _ := Page(scope, n, maxResults, token); token == "" && seen != n-first {
			t.Fatalf("pages visited %d items, want %d", seen, n-first)
		}
	})
}

// FuzzDecodeJSON decodes arbitrary JSON-protocol bodies: never a panic, and a malformed body is a
// 400 SerializationException.
func FuzzDecodeJSON(f *testing.F) {
	f.Add(`{"QueueUrl":"http://x/q","MaxNumberOfMessages":10,"AttributeNames":["All"]}`)
	f.Add(``)
	f.Add(`{"QueueUrl":1}`)
	f.Add(`[`)
	f.Fuzz(func(t *testing.T, body string) {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
		r.Header.Set("X-Amz-Target", body)
		_ = Target(r)
		var v struct {
			QueueUrl            string
			MaxNumberOfMessages int
			AttributeNames      []string
			Entries             []map[string]any
		}
		if err := DecodeJSON(r, &v); err != nil {
			if e := AsError(err); e == nil || e.Status != http.StatusBadRequest || e.Code != "SerializationException" {
				t.Fatalf("error %v is not a 400 SerializationException", err)
			}
		}
	})
}

// FuzzWildcard matches arbitrary patterns: a pattern without wildcards matches only itself, and
// "*" matches everything.
func FuzzWildcard(f *testing.F) {
	f.Add("i-*", "i-0123")
	f.Add("a?c", "abc")
	f.Add("**?*", "")
	f.Fuzz(func(t *testing.T, pattern, s string) {
		got := Wildcard(pattern, s)
		if !strings.ContainsAny(pattern, "*?") && got != (pattern == s) {
			t.Fatalf("Wildcard(%q, %q) = %v", pattern, s, got)
		}
		if !Wildcard("*", s) {
			t.Fatalf("* does not match %q", s)
		}
	})
}
