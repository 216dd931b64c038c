// Package printers writes what skiffctl get prints: the server's Tables in
// kubectl's column layout, and objects as YAML, JSON, names or JSONPath.
//
// Tables come from the API server (Accept: application/json;as=Table), so
// the columns and cells are upstream's; this package only lays them out as
// kubectl does: uppercase headers, each column as wide as its widest cell
// plus three spaces and at least six, priority>0 columns only with -o wide,
// a NAMESPACE column first with -A, "kind.group/name" names when several
// kinds are printed, and widths that only grow during a watch so rows stay
// aligned with the header.
package printers
