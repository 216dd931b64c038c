// Package serviceaccount holds the service accounts controller: it makes
// sure every active namespace has the `default` ServiceAccount (or the
// accounts Options names), and recreates one when it is deleted. It does
// not create tokens: bound tokens come from the TokenRequest API.
package serviceaccount
