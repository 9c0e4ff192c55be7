// Package shell reads shell scripts and systemd command lines the way a booting node's software
// does, far enough to find commands and their arguments.
//
// [Parse] tokenises a POSIX shell script into simple commands: quotes (single, double),
// backslashes, line continuations, comments and command separators follow the shell's rules,
// and variables assigned earlier in the script are expanded, with field splitting of unquoted
// expansions. It does not run anything: command substitution, functions, conditionals, loops,
// here-documents and redirections are not interpreted (see [Parse] for what each becomes).
// [SplitSystemd] splits a systemd unit value into words with systemd's quoting rules.
//
// The package owns quoting and word splitting only. It must not know what any command means.
package shell
