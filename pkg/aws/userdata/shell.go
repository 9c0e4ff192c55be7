package userdata

import (
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// This file reads shell scripts statically: mvdan.cc/sh/v3/syntax parses them as bash does
// (words, quotes, escapes, here-documents, functions, conditionals), and mvdan.cc/sh/v3/expand
// expands their words (quote removal, parameter expansion, field splitting) against the
// variables the script assigns. Nothing is run. What a static reading cannot know is marked
// unknown, so that checks stay silent instead of guessing: command and process substitution,
// arithmetic, variables the script never assigns (they may come from the environment), special
// parameters, and every variable after `source`, an `eval` of unknown text or an assignment in a
// branch that may or may not run.
//
// The reading follows bash's order of execution as far as it is static: function bodies run
// where the function is called, with its arguments as $1...; a condition on known values picks
// its branch, otherwise both branches of an if, case, && or || may run (their commands are read, marked conditional, and a variable they set differently
// becomes unknown); the commands inside a command substitution are not read; subshells and pipelines do not change the script's variables; an exit or
// exec outside any branch ends the script, and so, under set -e, does a command that certainly
// fails (false, a test on known values) where bash does not ignore set -e (if and while
// conditions, the commands before && and ||, ! commands); a command whose status only the boot
// knows is taken to succeed. A syntax error ends it too, as it ends bash: the
// commands before it are read.

// unknownText stands for a value the reading cannot know.
const unknownText = "\uFFFD"

// maxShellDepth bounds function calls, eval and bash -c nesting.
const maxShellDepth = 16

// shellWord is one word of a command after expansion and quote removal.
type shellWord struct {
	text string
	// unknown is true when the word holds an expansion the reader cannot follow.
	unknown bool
	// unknownSplit is true when the word comes from an unquoted unknown expansion, which bash
	// may split into any number of words: the positions of the words after it are uncertain.
	unknownSplit bool
	// raw is the word as written in the script, for messages.
	raw string
}

// shellVar is a variable the script assigned.
type shellVar struct {
	value    string
	unknown  bool
	exported bool
	// unset is true after `unset NAME`: the variable is known to be empty and unset.
	unset bool
}

// shellCommand is one simple command (or declaration).
type shellCommand struct {
	// line is where the command starts, endLine where it ends; 1-based, in the script read.
	line, endLine int
	// assignments are the NAME=value words before the command name: the command's environment.
	assignments map[string]shellVar
	// words are the command name and its arguments.
	words []shellWord
	// redirects are the targets of the command's redirections (> file, < file), expanded.
	redirects []shellWord
	// env is every exported variable at the command, its assignments included.
	env map[string]shellVar
	// conditional is true when the command may not run: it is in a branch of an if, case, &&,
	// ||, or the body of a loop.
	conditional bool
	// nested is true when the command was read from text the script builds (eval, bash -c):
	// its lines are the outer command's.
	nested bool
	// callers are the lines of the function calls the command runs inside, outermost first.
	callers []int
}

// shellScript is what a static reading of a script found.
type shellScript struct {
	commands []shellCommand
	// parseErr is the syntax error that ends the script, if any.
	parseErr error
	// dead are the lines of statements that never run: branches a known condition skips,
	// functions never called, what follows an exit.
	dead map[int]bool
	// followed are the lines of the commands that wrote files the reading then read where the
	// script runs them (shellfiles.go).
	followed map[int]bool
	// unknownRunAt is the first line that runs a file the script wrote with content the reading
	// cannot know; 0 when none.
	unknownRunAt int
}

// readShell reads a script's simple commands, in the order bash would run them.
func readShell(script string) shellScript {
	r := &shellReader{vars: map[string]shellVar{}, funcs: map[string]*syntax.Stmt{}, called: map[string]bool{}, dead: map[int]bool{},
		files: map[string]writtenFile{}, followed: map[int]bool{}}
	err := r.parse(script)
	for name, body := range r.funcs {
		if !r.called[name] {
			r.markDead(body)
		}
	}
	return shellScript{commands: r.out, parseErr: err, dead: r.dead, followed: r.followed, unknownRunAt: r.unknownRunAt}
}

// parse reads a script statement by statement, as bash does, until it stops or a syntax error.
// It never breaks out of the parser's iterator: mvdan.cc/sh v3.14.1 may yield again after the loop
// body returned false (a second syntax error), which panics (found by FuzzReadShell), so what
// comes after a stop or the first error is skipped instead.
func (r *shellReader) parse(script string) error {
	var parseErr error
	for st, err := range syntax.NewParser(syntax.Variant(syntax.LangBash)).StmtsSeq(strings.NewReader(script)) {
		switch {
		case parseErr != nil:
		case err != nil:
			parseErr = err
		case !r.stopped:
			r.stmt(st)
		default:
			r.markDead(st)
		}
	}
	return parseErr
}

// shellReader walks the statements of one script.
type shellReader struct {
	vars  map[string]shellVar
	funcs map[string]*syntax.Stmt
	// called are the functions the reading called.
	called map[string]bool
	// callers are the lines of the function calls being read.
	callers []int
	dead    map[int]bool
	// params are the positional parameters inside a function call; nil outside (unknown).
	params []shellWord
	// locals holds, for each function call being read, the values its `local` declarations
	// hide, restored when it returns.
	locals []map[string]*shellVar
	// funcConds holds, for each function call being read, the branch depth it was called at: a
	// return at that depth ends it.
	funcConds []int
	// opaque is true after a `source` or an unknown `eval`: variables the script never assigned
	// may have been set.
	opaque bool
	// cond counts the branches being read that may not run.
	cond int
	// nested counts eval and bash -c text being read; line is the outer command's line.
	nested     int
	nestedLine [2]int
	depth      int
	stopped    bool
	// exited is true when an exit (or set -e on a command that certainly fails) outside any
	// uncertain branch ended the script, so that a function call does not resume it.
	exited bool
	// errexit is true under set -e; noErrexit counts the contexts where bash ignores it (an if
	// or while condition, a command before && or ||, a negated command).
	errexit   bool
	noErrexit int
	// files are the files the script wrote, by path; followed and unknownRunAt as in shellScript.
	files        map[string]writtenFile
	followed     map[int]bool
	unknownRunAt int
	out          []shellCommand
}

func (r *shellReader) stmts(list []*syntax.Stmt) {
	for _, st := range list {
		if r.stopped {
			r.markDead(st)
			continue
		}
		r.stmt(st)
	}
}

// markDead records the lines of statements that never run.
func (r *shellReader) markDead(nodes ...syntax.Node) {
	if r.nested > 0 {
		return // their lines are the outer command's
	}
	for _, n := range nodes {
		if n == nil {
			continue
		}
		for l := int(n.Pos().Line()); l <= int(n.End().Line()); l++ {
			r.dead[l] = true
		}
	}
}

func (r *shellReader) markDeadList(list []*syntax.Stmt) {
	for _, st := range list {
		r.markDead(st)
	}
}

func (r *shellReader) stmt(st *syntax.Stmt) {
	if st.Negated {
		r.noErrexit++
		defer func() { r.noErrexit-- }()
	}
	r.command(st)
	r.checkErrexit(st)
}

// checkErrexit ends the script, under set -e, after a simple command or [[ ]] whose failure is
// statically known (false, test on known values). A command whose status only the boot knows is
// taken to succeed: the reading stays silent rather than guess that it fails.
func (r *shellReader) checkErrexit(st *syntax.Stmt) {
	if !r.errexit || r.noErrexit > 0 || r.stopped || st.Negated {
		return
	}
	switch st.Cmd.(type) {
	case *syntax.CallExpr, *syntax.TestClause:
	default:
		return
	}
	if ok, known := r.status(st); known && !ok {
		r.exit()
	}
}

// exit ends the script when no uncertain branch is being read.
func (r *shellReader) exit() {
	if r.cond == 0 {
		r.stopped, r.exited = true, true
	}
}

func (r *shellReader) command(st *syntax.Stmt) {
	switch cmd := st.Cmd.(type) {
	case nil:
		r.record(st, nil, nil, map[string]shellVar{})
	case *syntax.CallExpr:
		r.call(st, cmd)
	case *syntax.DeclClause:
		r.decl(st, cmd)
	case *syntax.BinaryCmd:
		r.binaryCmd(cmd)
	case *syntax.Block:
		r.stmts(cmd.Stmts)
	case *syntax.Subshell:
		r.subshell(func() { r.stmts(cmd.Stmts) })
	case *syntax.IfClause:
		r.ifClause(cmd)
	case *syntax.WhileClause:
		cond := func() { r.noErrexit++; r.stmts(cmd.Cond); r.noErrexit-- }
		r.alternatives(func() { cond(); r.stmts(cmd.Do) }, cond)
	case *syntax.ForClause:
		r.alternatives(func() {
			if wi, ok := cmd.Loop.(*syntax.WordIter); ok {
				r.assign(wi.Name.Value, shellVar{value: unknownText, unknown: true})
			}
			r.stmts(cmd.Do)
		}, func() {})
	case *syntax.CaseClause:
		r.caseClause(cmd)
	case *syntax.FuncDecl:
		if cmd.Name != nil {
			r.funcs[cmd.Name.Value] = cmd.Body
		}
	case *syntax.TimeClause:
		if cmd.Stmt != nil {
			r.stmt(cmd.Stmt)
		}
	case *syntax.CoprocClause:
		r.subshell(func() { r.stmt(cmd.Stmt) })
	}
}

// caseClause reads the item a known word matches, when every pattern before it is a known
// literal (or *), else every item as one that may run.
func (r *shellReader) caseClause(c *syntax.CaseClause) {
	if i, known := r.caseMatch(c); known {
		for j, item := range c.Items {
			if j == i {
				r.stmts(item.Stmts)
			} else {
				r.markDeadList(item.Stmts)
			}
		}
		return
	}
	branches := []func(){func() {}}
	for _, item := range c.Items {
		branches = append(branches, func() { r.stmts(item.Stmts) })
	}
	r.alternatives(branches...)
}

// caseMatch returns the index of the item a case's word matches (-1 for none), when it is known.
func (r *shellReader) caseMatch(c *syntax.CaseClause) (int, bool) {
	word := r.literal(c.Word)
	if word.unknown {
		return 0, false
	}
	for i, item := range c.Items {
		if item.Op != syntax.Break {
			return 0, false // ;& and ;;& run more than one item
		}
		for _, p := range item.Patterns {
			if lit := p.Lit(); lit == "*" {
				return i, true
			}
			if hasGlob(p) {
				return 0, false
			}
			pattern := r.literal(p)
			if pattern.unknown || strings.ContainsAny(pattern.text, "*?[") && !isQuotedWord(p) {
				return 0, false
			}
			if pattern.text == word.text {
				return i, true
			}
		}
	}
	return -1, true
}

// isQuotedWord reports whether a word is one quoted string, whose glob characters are literal.
func isQuotedWord(w *syntax.Word) bool {
	if len(w.Parts) != 1 {
		return false
	}
	switch w.Parts[0].(type) {
	case *syntax.SglQuoted, *syntax.DblQuoted:
		return true
	}
	return false
}

// binaryCmd reads X && Y and X || Y (Y runs as X's status says, or may run when it is not
// known) and pipelines (every part runs in a subshell).
func (r *shellReader) binaryCmd(cmd *syntax.BinaryCmd) {
	switch cmd.Op {
	case syntax.AndStmt, syntax.OrStmt:
		r.noErrexit++
		r.stmt(cmd.X)
		r.noErrexit--
		switch x, known := r.status(cmd.X); {
		case !known:
			r.alternatives(func() { r.stmt(cmd.Y) }, func() {})
		case x == (cmd.Op == syntax.AndStmt):
			r.stmt(cmd.Y)
		default:
			r.markDead(cmd.Y)
		}
	default:
		r.subshell(func() { r.stmt(cmd.X) })
		r.subshell(func() { r.stmt(cmd.Y) })
	}
}

// ifClause reads an if after its condition: the branch the condition picks when it is known
// (shellcond.go), else both (the else branch may be empty).
func (r *shellReader) ifClause(c *syntax.IfClause) {
	r.noErrexit++
	r.stmts(c.Cond)
	r.noErrexit--
	elseBranch := func() {
		switch {
		case c.Else == nil:
		case len(c.Else.Cond) == 0:
			r.stmts(c.Else.Then)
		default:
			r.ifClause(c.Else)
		}
	}
	switch ok, known := r.lastStatus(c.Cond); {
	case !known:
		r.alternatives(func() { r.stmts(c.Then) }, elseBranch)
	case ok:
		r.stmts(c.Then)
		if c.Else != nil {
			r.markDead(c.Else)
		}
	default:
		r.markDeadList(c.Then)
		elseBranch()
	}
}

// alternatives reads branches of which one runs, each from the same variables; afterwards a
// variable the branches leave differently is unknown.
func (r *shellReader) alternatives(branches ...func()) {
	start := maps.Clone(r.vars)
	stopped := true
	var results []map[string]shellVar
	r.cond++
	for _, branch := range branches {
		r.vars = maps.Clone(start)
		r.stopped = false
		branch()
		stopped = stopped && r.stopped
		results = append(results, r.vars)
	}
	r.cond--
	// The script goes on unless every branch stopped it; a branch that stopped adds nothing.
	r.stopped = stopped
	merged := map[string]shellVar{}
	for _, res := range results {
		for name := range res {
			merged[name] = shellVar{}
		}
	}
	for name := range merged {
		first, same := results[0][name], true
		exported := false
		for _, res := range results {
			same = same && res[name] == first
			exported = exported || res[name].exported
		}
		if same {
			merged[name] = first
		} else {
			merged[name] = shellVar{value: unknownText, unknown: true, exported: exported}
		}
	}
	r.vars = merged
}

// subshell reads commands whose variable changes do not reach the script.
func (r *shellReader) subshell(read func()) {
	vars, funcs, stopped, exited, errexit := maps.Clone(r.vars), maps.Clone(r.funcs), r.stopped, r.exited, r.errexit
	read()
	r.vars, r.funcs, r.stopped, r.exited, r.errexit = vars, funcs, stopped, exited, errexit
}

// assign sets a variable, keeping whether it is exported.
func (r *shellReader) assign(name string, v shellVar) {
	v.exported = v.exported || r.vars[name].exported
	r.vars[name] = v
}

// call reads a simple command.
func (r *shellReader) call(st *syntax.Stmt, ce *syntax.CallExpr) {
	assignments := map[string]shellVar{}
	for _, a := range ce.Assigns {
		assignments[a.Name.Value] = r.assignValue(a)
	}
	var words []shellWord
	for _, w := range ce.Args {
		words = append(words, r.fields(w)...)
	}
	if len(words) == 0 {
		for name, v := range assignments {
			r.assign(name, v)
		}
	}
	r.record(st, words, r.redirects(st), assignments)
	for len(words) > 1 && !words[0].unknown && isCommandWrapper(words[0].text) {
		words = words[1:]
		for len(words) > 1 && strings.HasPrefix(words[0].text, "-") {
			words = words[1:]
		}
	}
	r.noteWrites(st, words)
	if len(words) == 0 || words[0].unknown {
		return
	}
	r.builtin(words[0].text, words[1:])
}

// builtin follows what a command does to the reading: the builtins that change variables, the
// script's flow or what it runs, and calls of the script's functions.
func (r *shellReader) builtin(name string, args []shellWord) {
	if r.runText(name, args) {
		return
	}
	switch name {
	case "unset", "read", "mapfile", "readarray", "getopts", "printf", "set", "shift":
		r.variableBuiltin(name, args)
	case "exit":
		r.exit()
	case "return":
		// return ends the function being read (and is an error outside one, which bash reports
		// and goes on after).
		if n := len(r.funcConds); n > 0 && r.cond == r.funcConds[n-1] {
			r.stopped = true
		}
	case "exec":
		r.stopped = r.stopped || len(args) > 0 && r.cond == 0
	default:
		if strings.Contains(name, "/") && r.runFile(name, args, true) {
			return
		}
		if body, ok := r.funcs[name]; ok && r.depth < maxShellDepth {
			r.called[name] = true
			r.callFunction(body, args)
		}
	}
}

// runText follows the commands that run shell text: source and . (in the script), eval, and
// bash or sh (a new process) of a string or of a file the script wrote. It reports whether name
// is one of them.
func (r *shellReader) runText(name string, args []shellWord) bool {
	switch name {
	case "source", ".":
		if len(args) == 0 || args[0].unknown || !r.runFile(args[0].text, args[1:], false) {
			r.makeOpaque()
		}
	case "eval":
		r.evalText(args, false)
	case "bash", "sh":
		if len(args) >= 2 && args[0].text == "-c" {
			// A new bash: set -e is not inherited.
			r.subshell(func() { r.errexit = false; r.evalText(args[1:2], true) })
		} else if file, rest, ok := scriptArg(args); ok {
			r.runFile(file.text, rest, true)
		}
	default:
		return false
	}
	return true
}

// variableBuiltin follows the builtins that set or unset variables and positional parameters.
func (r *shellReader) variableBuiltin(name string, args []shellWord) {
	switch name {
	case "unset":
		for _, a := range args {
			if !a.unknown && !strings.HasPrefix(a.text, "-") {
				r.vars[a.text] = shellVar{unset: true}
			}
		}
	case "set":
		r.setOptions(args)
	case "shift":
		if len(r.params) > 0 {
			r.params = r.params[1:]
		}
	default: // read, mapfile, readarray, getopts, printf -v: values from input the reading does not have
		for _, a := range args {
			if !a.unknown && isName(a.text) {
				r.assign(a.text, shellVar{value: unknownText, unknown: true})
			}
		}
	}
}

// setOptions follows set: -e/+e and -o/+o errexit (alone or among other letters, as in set -ex),
// and set -- with new positional parameters. An option word the reading cannot know leaves
// errexit off: a failure is then not taken to end the script.
func (r *shellReader) setOptions(args []shellWord) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a.unknown:
			r.errexit = false
			return
		case a.text == "--":
			r.params = args[i+1:]
			return
		case (a.text == "-o" || a.text == "+o") && i+1 < len(args):
			i++
			if args[i].text == "errexit" {
				r.errexit = a.text == "-o"
			}
		case len(a.text) > 1 && (a.text[0] == '-' || a.text[0] == '+') && !strings.HasPrefix(a.text, "--"):
			if strings.Contains(a.text[1:], "e") {
				r.errexit = a.text[0] == '-'
			}
		default:
			// set word...: the words become the positional parameters.
			r.params = args[i:]
			return
		}
	}
}

// callFunction reads a function's body with its arguments as positional parameters; `local`
// variables are restored when it returns.
func (r *shellReader) callFunction(body *syntax.Stmt, args []shellWord) {
	params := r.params
	r.params = append([]shellWord{}, args...)
	r.locals = append(r.locals, map[string]*shellVar{})
	r.funcConds = append(r.funcConds, r.cond)
	r.callers = append(r.callers, r.out[len(r.out)-1].line) // the call, recorded just before
	r.depth++
	stopped := r.stopped
	r.stmt(body)
	r.depth--
	r.funcConds = r.funcConds[:len(r.funcConds)-1]
	r.callers = r.callers[:len(r.callers)-1]
	for name, old := range r.locals[len(r.locals)-1] {
		if old == nil {
			delete(r.vars, name)
		} else {
			r.vars[name] = *old
		}
	}
	r.locals = r.locals[:len(r.locals)-1]
	r.params = params
	// A return ends the function, not the script; an exit ends both.
	r.stopped = stopped || r.exited
}

// evalText reads text the script runs: eval's arguments joined by blanks, or bash -c's string.
func (r *shellReader) evalText(args []shellWord, child bool) {
	text := make([]string, 0, len(args))
	for _, a := range args {
		if a.unknown {
			if !child {
				r.makeOpaque()
			}
			return
		}
		text = append(text, a.text)
	}
	if err := r.readNested(strings.Join(text, " ")); err != nil && !child {
		r.makeOpaque()
	}
}

// readNested reads text the script runs (eval, bash -c, a file it wrote) where it runs: its
// commands take the line of the command that runs it.
func (r *shellReader) readNested(text string) error {
	if r.depth >= maxShellDepth || len(r.out) == 0 {
		return nil
	}
	outer := r.out[len(r.out)-1]
	if r.nested == 0 {
		r.nestedLine = [2]int{outer.line, outer.endLine}
	}
	r.nested++
	r.depth++
	err := r.parse(text)
	r.depth--
	r.nested--
	return err
}

// makeOpaque records that variables may have changed in ways the reading cannot see.
func (r *shellReader) makeOpaque() {
	r.opaque = true
	for name, v := range r.vars {
		r.vars[name] = shellVar{value: unknownText, unknown: true, exported: v.exported}
	}
}

// decl reads export, declare, typeset, readonly, local and nameref.
func (r *shellReader) decl(st *syntax.Stmt, dc *syntax.DeclClause) {
	variant := dc.Variant.Value
	export := variant == "export"
	words := []shellWord{{text: variant, raw: variant}}
	for _, a := range dc.Args {
		if a.Naked && a.Name == nil && a.Value != nil {
			flag := r.literal(a.Value)
			words = append(words, flag)
			if !flag.unknown && strings.HasPrefix(flag.text, "-") && strings.Contains(flag.text, "x") {
				export = true
			}
		}
	}
	for _, a := range dc.Args {
		if a.Name == nil {
			continue
		}
		name := a.Name.Value
		if variant == "local" && len(r.locals) > 0 {
			frame := r.locals[len(r.locals)-1]
			if _, saved := frame[name]; !saved {
				if old, ok := r.vars[name]; ok {
					frame[name] = &old
				} else {
					frame[name] = nil
				}
			}
		}
		v, known := r.vars[name]
		switch {
		case !a.Naked:
			v = r.assignValue(a)
			v.exported = r.vars[name].exported
		case variant == "local":
			// `local NAME` makes a new, empty variable in the function.
			v = shellVar{unset: true}
		case !known:
			// `export NAME` of a variable the script never assigned: it may come from the
			// environment.
			v = shellVar{value: unknownText, unknown: true}
		}
		v.exported = v.exported || export
		r.vars[name] = v
		text := name
		if !a.Naked {
			text += "=" + v.value
		}
		words = append(words, shellWord{text: text, unknown: v.unknown && !a.Naked, raw: name})
	}
	r.record(st, words, r.redirects(st), map[string]shellVar{})
}

// assignValue is the value an assignment gives its variable.
func (r *shellReader) assignValue(a *syntax.Assign) shellVar {
	if a.Array != nil || a.Index != nil {
		return shellVar{value: unknownText, unknown: true}
	}
	w := r.literal(a.Value)
	v := shellVar{value: w.text, unknown: w.unknown}
	if a.Append {
		old, ok := r.vars[a.Name.Value]
		if !ok && !r.opaque {
			// NAME+=value on a variable the script never assigned: it may come from the
			// environment.
			return shellVar{value: unknownText, unknown: true}
		}
		v = shellVar{value: old.value + w.text, unknown: old.unknown || w.unknown || !ok}
	}
	return v
}

// record adds a command to the reading.
func (r *shellReader) record(st *syntax.Stmt, words, redirects []shellWord, assignments map[string]shellVar) {
	env := map[string]shellVar{}
	for name, v := range r.vars {
		if v.exported && !v.unset {
			env[name] = v
		}
	}
	maps.Copy(env, assignments)
	cmd := shellCommand{
		line: int(st.Pos().Line()), endLine: int(st.End().Line()),
		assignments: assignments, words: words, redirects: redirects, env: env,
		conditional: r.cond > 0, nested: r.nested > 0, callers: slices.Clone(r.callers),
	}
	if r.nested > 0 {
		cmd.line, cmd.endLine = r.nestedLine[0], r.nestedLine[1]
	}
	if len(words) == 0 && len(assignments) == 0 && len(redirects) == 0 {
		return
	}
	r.out = append(r.out, cmd)
}

// redirects expands the targets of a statement's redirections (not here-document bodies).
func (r *shellReader) redirects(st *syntax.Stmt) []shellWord {
	var out []shellWord
	for _, rd := range st.Redirs {
		if rd.Word == nil || rd.Hdoc != nil {
			continue
		}
		out = append(out, r.literal(rd.Word))
	}
	return out
}

// fields expands a word as a command argument: it may become several words, or none.
func (r *shellReader) fields(w *syntax.Word) []shellWord {
	unknown, unquotedUnknown := r.wordUnknown(w)
	if hasGlob(w) {
		// Pathname expansion depends on the files on the instance.
		unknown, unquotedUnknown = true, true
	}
	raw := wordSource(w)
	values, err := expand.Fields(r.expandConfig(w), w)
	if err != nil {
		return []shellWord{{text: unknownText, unknown: true, unknownSplit: unquotedUnknown, raw: raw}}
	}
	out := make([]shellWord, 0, len(values))
	for _, v := range values {
		out = append(out, shellWord{text: v, unknown: unknown || strings.Contains(v, unknownText), unknownSplit: unquotedUnknown, raw: raw})
	}
	return out
}

// literal expands a word that is not split: an assignment's value, a redirection's target.
func (r *shellReader) literal(w *syntax.Word) shellWord {
	if w == nil {
		return shellWord{}
	}
	unknown, _ := r.wordUnknown(w)
	raw := wordSource(w)
	v, err := expand.Literal(r.expandConfig(w), w)
	if err != nil {
		return shellWord{text: unknownText, unknown: true, raw: raw}
	}
	return shellWord{text: v, unknown: unknown || strings.Contains(v, unknownText), raw: raw}
}

// wordUnknown reports whether a word holds an expansion the reading cannot know, and whether
// one such is unquoted (so bash splits it into an unknown number of words).
func (r *shellReader) wordUnknown(w *syntax.Word) (unknown, unquoted bool) {
	for _, part := range w.Parts {
		partUnknown := false
		syntax.Walk(part, func(n syntax.Node) bool {
			switch n := n.(type) {
			case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.ArithmExp, *syntax.ExtGlob:
				partUnknown = true
			case *syntax.ParamExp:
				partUnknown = partUnknown || r.paramUnknown(n)
			}
			return !partUnknown
		})
		if partUnknown {
			unknown = true
			if _, quoted := part.(*syntax.DblQuoted); !quoted {
				if _, single := part.(*syntax.SglQuoted); !single {
					unquoted = true
				}
			}
		}
	}
	return unknown, unquoted
}

// paramUnknown reports whether a parameter expansion's value is unknown.
func (r *shellReader) paramUnknown(pe *syntax.ParamExp) bool {
	if pe.Param == nil || pe.Excl || pe.Index != nil {
		return true
	}
	name := pe.Param.Value
	if n, err := strconv.Atoi(name); err == nil || name == "@" || name == "*" || name == "#" {
		if r.params == nil {
			return true
		}
		if err == nil {
			return n == 0 || n > len(r.params) || r.params[n-1].unknown
		}
		for _, p := range r.params {
			if p.unknown {
				return true
			}
		}
		return false
	}
	if !isName(name) {
		return true // $? $$ $! $- and the like
	}
	v, assigned := r.vars[name]
	switch {
	case assigned:
		return v.unknown
	case r.opaque:
		return true
	case pe.Exp != nil:
		// A variable the script never assigned is taken as unset when the expansion says what
		// to do then (${NAME:-default}, ${NAME:+alternative}).
		switch pe.Exp.Op {
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull, syntax.AlternateUnset, syntax.AlternateUnsetOrNull:
			return false
		}
	}
	return true
}

// expandConfig is the expansion environment of one word: the script's variables, unknown ones
// as unknownText. A variable the script never assigned is unset when the word only uses it with
// a default or alternative, and unknownText otherwise, so that it stays one word.
func (r *shellReader) expandConfig(w *syntax.Word) *expand.Config {
	withDefault := map[string]bool{}
	syntax.Walk(w, func(n syntax.Node) bool {
		if pe, ok := n.(*syntax.ParamExp); ok && pe.Param != nil {
			name := pe.Param.Value
			if _, seen := withDefault[name]; !seen {
				withDefault[name] = true
			}
			if pe.Exp == nil || pe.Length {
				withDefault[name] = false
			}
		}
		return true
	})
	return &expand.Config{
		Env: readerEnv{r: r, withDefault: withDefault},
		CmdSubst: func(out io.Writer, _ *syntax.CmdSubst) error {
			_, err := out.Write([]byte(unknownText))
			return err
		},
		ProcSubst: func(*syntax.ProcSubst) (string, error) { return unknownText, nil },
	}
}

// readerEnv shows the reader's variables to the expander.
type readerEnv struct {
	r           *shellReader
	withDefault map[string]bool
}

func (e readerEnv) Get(name string) expand.Variable {
	str := func(s string) expand.Variable { return expand.Variable{Set: true, Kind: expand.String, Str: s} }
	r := e.r
	if v, positional := e.positional(name); positional {
		return v
	}
	if name == "IFS" {
		if v, ok := r.vars[name]; ok && !v.unknown && !v.unset {
			return str(v.value)
		}
		return expand.Variable{}
	}
	v, assigned := r.vars[name]
	switch {
	case assigned && v.unset:
		return expand.Variable{}
	case assigned && v.unknown:
		return str(unknownText)
	case assigned:
		return str(v.value)
	case e.withDefault[name] && !r.opaque:
		return expand.Variable{}
	}
	return str(unknownText)
}

// positional returns $1..., $@, $* and $#: the function's arguments, unknown outside one.
func (e readerEnv) positional(name string) (expand.Variable, bool) {
	str := func(s string) expand.Variable { return expand.Variable{Set: true, Kind: expand.String, Str: s} }
	params := e.r.params
	if n, err := strconv.Atoi(name); err == nil {
		if params == nil || n == 0 || n > len(params) {
			return str(unknownText), true
		}
		return str(params[n-1].text), true
	}
	switch name {
	case "@", "*":
		if params == nil {
			return expand.Variable{Set: true, Kind: expand.Indexed, List: []string{unknownText}}, true
		}
		list := make([]string, 0, len(params))
		for _, p := range params {
			list = append(list, p.text)
		}
		return expand.Variable{Set: true, Kind: expand.Indexed, List: list}, true
	case "#":
		if params == nil {
			return str(unknownText), true
		}
		return str(strconv.Itoa(len(params))), true
	}
	return expand.Variable{}, false
}

func (e readerEnv) Each(fn func(name string, vr expand.Variable) bool) {
	for name := range e.r.vars {
		if !fn(name, e.Get(name)) {
			return
		}
	}
}

// hasGlob reports whether a word has an unquoted glob pattern (*, ? or [...]), which bash
// replaces with the names of the files it matches.
func hasGlob(w *syntax.Word) bool {
	for _, part := range w.Parts {
		lit, ok := part.(*syntax.Lit)
		if !ok {
			continue
		}
		bracket := false
		for i := 0; i < len(lit.Value); i++ {
			switch c := lit.Value[i]; {
			case c == '\\':
				i++ // an escaped character is literal
			case c == '*' || c == '?' || c == ']' && bracket:
				return true
			case c == '[':
				bracket = true
			}
		}
	}
	return false
}

// wordSource is a word as written.
func wordSource(w *syntax.Word) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, w); err != nil {
		return w.Lit()
	}
	return b.String()
}

// isName reports whether s is a shell variable name.
func isName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if c != '_' && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// isCommandWrapper reports whether a command runs its arguments as a command.
func isCommandWrapper(name string) bool {
	switch name {
	case "sudo", "env", "nohup", "command", "time", "builtin":
		return true
	}
	return false
}

// isDeclaration reports whether a command name is one of bash's declaration builtins.
func isDeclaration(name string) bool {
	switch name {
	case "export", "declare", "typeset", "readonly", "local", "nameref":
		return true
	}
	return false
}

// shellQuote quotes s as one word for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
