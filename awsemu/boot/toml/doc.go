// Package toml reads the subset of TOML that Bottlerocket user data uses, so the emulator can
// read settings without a third-party module.
//
// Supported: comments, [tables], [[arrays of tables]], bare, quoted and dotted keys, basic and
// literal strings (single- and multi-line), decimal/hex/octal/binary integers, booleans, arrays
// and inline tables. Not supported (reported as errors): floats, dates and times. Values decode
// to string, int64, bool, []any and map[string]any.
//
// The package owns TOML syntax only. It must not know what any setting means.
package toml
