// Package architecture holds the test that enforces docs/design/architecture.md: the import
// rules between Joiner's packages ("must not" in that table, as far as an import graph can say
// it) and that the table lists every package `go list ./...` finds. It owns no product code and
// must not be imported.
package architecture
