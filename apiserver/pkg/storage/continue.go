package storage

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path"
	"strings"
)

// continueToken is upstream's format, so tokens look the same to clients.
type continueToken struct {
	APIVersion      string `json:"v"`
	ResourceVersion int64  `json:"rv"`
	StartKey        string `json:"start"`
}

// InconsistentContinueRV in a continue token means: continue at the latest
// revision (upstream's -1), given after the token's own revision was
// compacted.
const InconsistentContinueRV = -1

// ContinueExpiredError is a LIST continued from a compacted revision. It
// is ErrGone, and carries the token that continues the same list at the
// latest revision, which upstream returns in the 410 Status.
type ContinueExpiredError struct {
	// Continue continues from the same key at the latest revision; empty if
	// it could not be made.
	Continue string
}

func (e *ContinueExpiredError) Error() string {
	if e.Continue == "" {
		return "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter."
	}
	return "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."
}

func (e *ContinueExpiredError) Unwrap() error { return ErrGone }

// EncodeContinue makes the token for the next page: the list continues at
// key (relative to keyPrefix) at revision rev.
func EncodeContinue(key, keyPrefix string, rev int64) (string, error) {
	nextKey := strings.TrimPrefix(key, keyPrefix)
	if nextKey == key {
		return "", fmt.Errorf("%w: unable to encode next field: the key and key prefix do not match", ErrInvalid)
	}
	out, err := json.Marshal(&continueToken{APIVersion: "meta.k8s.io/v1", ResourceVersion: rev, StartKey: nextKey})
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(out), nil
}

// DecodeContinue returns the absolute key to start at and the revision
// (InconsistentContinueRV: the latest).
func DecodeContinue(token, keyPrefix string) (fromKey string, rev int64, err error) {
	data, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return "", 0, fmt.Errorf("%w: continue key is not valid: %v", ErrInvalid, err)
	}
	var c continueToken
	if err := json.Unmarshal(data, &c); err != nil {
		return "", 0, fmt.Errorf("%w: continue key is not valid: %v", ErrInvalid, err)
	}
	switch c.APIVersion {
	case "meta.k8s.io/v1":
		if c.ResourceVersion == 0 {
			return "", 0, fmt.Errorf("%w: continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)", ErrInvalid)
		}
		if len(c.StartKey) == 0 {
			return "", 0, fmt.Errorf("%w: continue key is not valid: encoded start key empty (version meta.k8s.io/v1)", ErrInvalid)
		}
		// Clean the key so a crafted token cannot escape the resource's prefix.
		key := c.StartKey
		if !strings.HasPrefix(key, "/") {
			key = "/" + key
		}
		cleaned := path.Clean(key)
		if cleaned != key {
			return "", 0, fmt.Errorf("%w: continue key is not valid: %s", ErrInvalid, c.StartKey)
		}
		return keyPrefix + cleaned[1:], c.ResourceVersion, nil
	default:
		return "", 0, fmt.Errorf("%w: continue key is not valid: server does not recognize this encoding (%s)", ErrInvalid, c.APIVersion)
	}
}
