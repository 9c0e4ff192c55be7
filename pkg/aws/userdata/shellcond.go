package userdata

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file decides, where a static reading can, whether a condition succeeds: true, false, :,
// test and [ with string and integer comparisons, [[ ]] with the same, !, && and ||, on words
// whose values are known. Anything else (a file test, a command's status) is unknown, and both
// ways are read.

// status reports whether a statement, run as a condition, succeeds; known is false when only the
// boot can tell.
func (r *shellReader) status(st *syntax.Stmt) (ok, known bool) {
	if st.Background || len(st.Redirs) > 0 {
		return false, false
	}
	switch cmd := st.Cmd.(type) {
	case *syntax.CallExpr:
		ok, known = r.callStatus(cmd)
	case *syntax.TestClause:
		ok, known = r.testExpr(cmd.X)
	case *syntax.BinaryCmd:
		x, xKnown := r.status(cmd.X)
		y, yKnown := r.status(cmd.Y)
		switch {
		case cmd.Op == syntax.AndStmt && xKnown && !x, cmd.Op == syntax.OrStmt && xKnown && x:
			ok, known = x, true
		case (cmd.Op == syntax.AndStmt || cmd.Op == syntax.OrStmt) && xKnown && yKnown:
			ok, known = y, true
		}
	}
	if st.Negated {
		ok = !ok
	}
	return ok, known
}

// lastStatus is the status of a list of statements: its last one's.
func (r *shellReader) lastStatus(list []*syntax.Stmt) (ok, known bool) {
	if len(list) == 0 {
		return false, false
	}
	return r.status(list[len(list)-1])
}

func (r *shellReader) callStatus(ce *syntax.CallExpr) (ok, known bool) {
	if len(ce.Args) == 0 {
		// Assignments alone succeed, unless a command substitution in them fails.
		hasSubst := false
		syntax.Walk(ce, func(n syntax.Node) bool {
			_, isSubst := n.(*syntax.CmdSubst)
			hasSubst = hasSubst || isSubst
			return !hasSubst
		})
		return !hasSubst, !hasSubst
	}
	if len(ce.Assigns) > 0 {
		return false, false
	}
	var words []shellWord
	for _, w := range ce.Args {
		words = append(words, r.fields(w)...)
	}
	if len(words) == 0 {
		return false, false
	}
	for _, w := range words {
		if w.unknown {
			return false, false
		}
	}
	args := make([]string, 0, len(words)-1)
	for _, w := range words[1:] {
		args = append(args, w.text)
	}
	switch words[0].text {
	case "true", ":":
		return true, true
	case "false":
		return false, true
	case "[":
		if len(args) == 0 || args[len(args)-1] != "]" {
			return false, false
		}
		return testArgs(args[:len(args)-1])
	case "test":
		return testArgs(args)
	}
	return false, false
}

// testArgs evaluates test's arguments, for the forms whose result depends only on them.
func testArgs(args []string) (ok, known bool) {
	if len(args) > 0 && args[0] == "!" {
		ok, known = testArgs(args[1:])
		return !ok, known
	}
	switch len(args) {
	case 0:
		return false, true
	case 1:
		return args[0] != "", true
	case 2:
		switch args[0] {
		case "-n":
			return args[1] != "", true
		case "-z":
			return args[1] == "", true
		}
	case 3:
		return compare(args[0], args[1], args[2], false)
	}
	return false, false
}

// compare evaluates a binary string or integer comparison; in [[ ]] (pattern), the right side
// of == and != is a pattern, known only without glob characters.
func compare(x, op, y string, pattern bool) (ok, known bool) {
	switch op {
	case "=", "==", "!=":
		if pattern && strings.ContainsAny(y, "*?[") {
			return false, false
		}
		return (x == y) == (op != "!="), true
	case "-eq", "-ne", "-lt", "-le", "-gt", "-ge":
		a, errA := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		b, errB := strconv.ParseInt(strings.TrimSpace(y), 10, 64)
		if errA != nil || errB != nil {
			return false, false
		}
		return map[string]bool{"-eq": a == b, "-ne": a != b, "-lt": a < b, "-le": a <= b, "-gt": a > b, "-ge": a >= b}[op], true
	}
	return false, false
}

// testExpr evaluates a [[ ]] expression.
func (r *shellReader) testExpr(e syntax.TestExpr) (ok, known bool) {
	switch e := e.(type) {
	case *syntax.Word:
		w := r.literal(e)
		return w.text != "", !w.unknown
	case *syntax.ParenTest:
		return r.testExpr(e.X)
	case *syntax.UnaryTest:
		if e.Op == syntax.TsNot {
			ok, known = r.testExpr(e.X)
			return !ok, known
		}
		w, isWord := e.X.(*syntax.Word)
		if !isWord || (e.Op != syntax.TsEmpStr && e.Op != syntax.TsNempStr) {
			return false, false
		}
		v := r.literal(w)
		return (v.text == "") == (e.Op == syntax.TsEmpStr), !v.unknown
	case *syntax.BinaryTest:
		switch e.Op {
		case syntax.AndTest, syntax.OrTest:
			x, xKnown := r.testExpr(e.X)
			if xKnown && x == (e.Op == syntax.OrTest) {
				return x, true
			}
			y, yKnown := r.testExpr(e.Y)
			return y, xKnown && yKnown
		}
		xw, xIsWord := e.X.(*syntax.Word)
		yw, yIsWord := e.Y.(*syntax.Word)
		if !xIsWord || !yIsWord {
			return false, false
		}
		x, y := r.literal(xw), r.literal(yw)
		if x.unknown || y.unknown {
			return false, false
		}
		return compare(x.text, e.Op.String(), y.text, true)
	}
	return false, false
}
