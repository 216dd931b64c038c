package iptables

import (
	"bufio"
	"bytes"
	"sort"
	"strconv"
	"strings"
)

// ParseRules reads the rules of the per-Service chains from iptables-save
// output, each as the key RuleKey gives, in the kernel's order.
func ParseRules(save []byte) map[string][]string {
	rules := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(save))
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "-A "+Prefix) {
			continue
		}
		chain, key, ok := RuleKey(line)
		if !ok || !isServiceChain(chain) {
			// A rule that cannot be read makes its chain differ from
			// any wanted one, so it is rewritten.
			key = "unreadable: " + line
		}
		rules[chain] = append(rules[chain], key)
	}
	return rules
}

// sameRules reports whether the kernel's chains hold exactly the rules
// of data (one Service's generated chains).
func sameRules(data []byte, chains []string, kernel map[string][]string) bool {
	want := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" {
			continue
		}
		chain, key, ok := RuleKey(line)
		if !ok {
			return false
		}
		want[chain] = append(want[chain], key)
	}
	for _, c := range chains {
		have, w := kernel[c], want[c]
		if len(have) != len(w) {
			return false
		}
		for i := range w {
			if have[i] != w[i] {
				return false
			}
		}
	}
	return true
}

// RuleKey turns one "-A CHAIN ..." line, as skiff writes it or as
// iptables-save prints it, into its chain and a key that is the same for
// both: iptables-save reorders the matches, quotes comments, adds /32 to
// addresses, prints probabilities with eleven decimals and adds the
// recent match's defaults. The options, each with its arguments and its
// negation, are normalised and sorted; rule order within a chain is kept
// by the caller.
func RuleKey(line string) (chain, key string, ok bool) {
	toks, ok := splitQuoted(line)
	if !ok || len(toks) < 2 || toks[0] != "-A" {
		return "", "", false
	}
	chain = toks[1]
	var units []string
	neg := false
	for i := 2; i < len(toks); {
		t := toks[i]
		if t == "!" {
			neg = true
			i++
			continue
		}
		if !strings.HasPrefix(t, "-") {
			return "", "", false
		}
		j := i + 1
		for j < len(toks) && toks[j] != "!" && !(strings.HasPrefix(toks[j], "-") && len(toks[j]) > 1 && !isNumber(toks[j])) {
			j++
		}
		args := append([]string(nil), toks[i+1:j]...)
		i = j
		switch t {
		case "-s", "-d", "--source", "--destination":
			for k, a := range args {
				args[k] = strings.TrimSuffix(a, "/32")
			}
		case "--probability":
			for k, a := range args {
				if f, err := strconv.ParseFloat(a, 64); err == nil {
					args[k] = strconv.FormatFloat(f, 'f', 6, 64)
				}
			}
		case "--mask":
			if len(args) == 1 && args[0] == "255.255.255.255" {
				neg = false
				continue
			}
		case "--rsource":
			neg = false
			continue
		}
		u := t + " " + strings.Join(args, " ")
		if neg {
			u = "! " + u
			neg = false
		}
		units = append(units, u)
	}
	sort.Strings(units)
	return chain, strings.Join(units, "\x00"), true
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// splitQuoted splits on spaces, keeping "double quoted" words whole
// (without the quotes, with \" and \\ unescaped). Words without escapes
// are substrings of s (no copy).
func splitQuoted(s string) ([]string, bool) {
	out := make([]string, 0, 24)
	for i := 0; i < len(s); {
		switch s[i] {
		case ' ':
			i++
		case '"':
			j := i + 1
			escaped := false
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					escaped = true
					j++
				}
				j++
			}
			if j >= len(s) {
				return nil, false
			}
			w := s[i+1 : j]
			if escaped {
				var b strings.Builder
				for k := 0; k < len(w); k++ {
					if w[k] == '\\' && k+1 < len(w) {
						k++
					}
					b.WriteByte(w[k])
				}
				w = b.String()
			}
			out = append(out, w)
			i = j + 1
		default:
			j := i
			for j < len(s) && s[j] != ' ' && s[j] != '"' {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
	}
	return out, true
}
