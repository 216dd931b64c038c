// Package authn authenticates API requests: an x509 client certificate
// signed by the client CA (CN is the user, O the groups), or a bearer token
// from a token file in upstream's CSV format (token,user,uid,"group1,group2").
// Every authenticated user also gets system:authenticated. Requests with
// no credentials are 401, except the health endpoints.
package authn
