package validation

import "strings"

// Fast checks of the name formats that apimachinery's util/validation checks
// with regular expressions. Each answers only whether a value is valid;
// callers still call apimachinery for the messages of an invalid one, so
// what a client sees is unchanged. TestNameChecksMatchApimachinery compares
// them with apimachinery on random and edge-case strings.

func isAlnumLower(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }

func isAlnum(c byte) bool { return isAlnumLower(c) || c >= 'A' && c <= 'Z' }

// dns1123LabelChars is [a-z0-9]([-a-z0-9]*[a-z0-9])? with no length bound.
func dns1123LabelChars(s string) bool {
	if s == "" || !isAlnumLower(s[0]) || !isAlnumLower(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnumLower(c) && c != '-' {
			return false
		}
	}
	return true
}

// isDNS1123Label is len(validation.IsDNS1123Label(s)) == 0.
func isDNS1123Label(s string) bool { return len(s) <= 63 && dns1123LabelChars(s) }

// isDNS1123Subdomain is len(validation.IsDNS1123Subdomain(s)) == 0.
func isDNS1123Subdomain(s string) bool {
	if len(s) > 253 {
		return false
	}
	for {
		i := strings.IndexByte(s, '.')
		if i < 0 {
			return dns1123LabelChars(s)
		}
		if !dns1123LabelChars(s[:i]) {
			return false
		}
		s = s[i+1:]
	}
}

// isLabelValueChars is ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], non-empty,
// at most 63 characters: a qualified name's name part.
func isLabelValueChars(s string) bool {
	if s == "" || len(s) > 63 || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// isQualifiedName is len(validation.IsQualifiedName(s)) == 0: a name part,
// with an optional DNS subdomain prefix and '/'.
func isQualifiedName(s string) bool {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		if !isDNS1123Subdomain(s[:i]) {
			return false
		}
		s = s[i+1:]
	}
	return isLabelValueChars(s)
}

// isLabelValue is len(validation.IsValidLabelValue(s)) == 0.
func isLabelValue(s string) bool { return s == "" || isLabelValueChars(s) }
