package defaults

import (
	"regexp"
	"strings"
)

// The grammar of an image reference, as the distribution project (and so
// upstream's parsers.ParseImageName) defines it.
const (
	refAlphanumeric  = `[a-z0-9]+`
	refSeparator     = `(?:[._]|__|[-]+)`
	refPathComponent = refAlphanumeric + `(?:` + refSeparator + refAlphanumeric + `)*`
	refDomainComp    = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])`
	refDomainName    = refDomainComp + `(?:\.` + refDomainComp + `)*`
	refIPv6          = `\[[a-fA-F0-9:]+\]`
	refDomainAndPort = `(?:` + refDomainName + `|` + refIPv6 + `)(?::[0-9]+)?`
	refRemoteName    = refPathComponent + `(?:/` + refPathComponent + `)*`
	refName          = `(?:` + refDomainAndPort + `/)?` + refRemoteName
	refTag           = `[\w][\w.-]{0,127}`
	refDigest        = `[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}`
	refNameMaxLength = 255
)

var (
	referenceRegexp  = regexp.MustCompile(`^(` + refName + `)(?::(` + refTag + `))?(?:@(` + refDigest + `))?$`)
	identifierRegexp = regexp.MustCompile(`^[a-f0-9]{64}$`)
)

// imageTag returns the tag that upstream's parsers.ParseImageName reports for
// image: the explicit tag, "latest" when the reference has neither tag nor
// digest, and "" when there is only a digest or the reference does not parse.
func imageTag(image string) string {
	if image == "" || identifierRegexp.MatchString(image) {
		return ""
	}
	m := referenceRegexp.FindStringSubmatch(image)
	if m == nil {
		return ""
	}
	name, tag, digest := m[1], m[2], m[3]
	if len(name) > refNameMaxLength {
		return ""
	}
	// A reference whose path (everything after a domain) holds upper-case
	// letters does not parse. The regexp lets the first component be a domain
	// with upper-case letters only when it looks like one.
	if i := strings.IndexByte(name, '/'); i >= 0 {
		first := name[:i]
		isDomain := strings.ContainsAny(first, ".:") || first == "localhost" || strings.ToLower(first) != first
		if !isDomain && strings.ToLower(name) != name {
			return ""
		}
	} else if strings.ToLower(name) != name {
		return ""
	}
	if tag == "" && digest == "" {
		return "latest"
	}
	return tag
}
