// Package manifest reads the objects of -f arguments: files, directories
// (their .yaml, .yml and .json files), and "-" for standard input, each
// possibly holding several YAML documents separated by "---" lines, or a
// List. Every object remembers where it came from (file and first line of
// its document), and a YAML error names the file and the line of the whole
// file, not of the document.
package manifest
