package manifest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// Object is one object from a manifest.
type Object struct {
	*unstructured.Unstructured
	// Source is the file name, or "STDIN".
	Source string
	// Line is the first line of the object's document in Source.
	Line int
}

// Where returns "file:line" for messages.
func (o *Object) Where() string { return fmt.Sprintf("%s:%d", o.Source, o.Line) }

// Reader reads manifests.
type Reader struct {
	// Stdin is read for "-".
	Stdin io.Reader
	// Recursive descends into subdirectories.
	Recursive bool
}

// Read returns the objects of every path in order.
func (r *Reader) Read(paths []string) ([]*Object, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("must give at least one file with -f (a file, a directory, or - for standard input)")
	}
	var out []*Object
	for _, p := range paths {
		objs, err := r.readPath(p)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

func (r *Reader) readPath(path string) ([]*Object, error) {
	if path == "-" {
		if r.Stdin == nil {
			return nil, fmt.Errorf("-f -: no standard input")
		}
		data, err := io.ReadAll(r.Stdin)
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
		return Parse("STDIN", data)
	}
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("-f %s: %w", path, unwrapPathError(err))
	}
	if !info.IsDir() {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return Parse(path, data)
	}
	files, err := r.dirFiles(path)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("-f %s: the directory holds no .yaml, .yml or .json file", path)
	}
	var out []*Object
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		objs, err := Parse(f, data)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	return out, nil
}

func unwrapPathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

func (r *Reader) dirFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && !r.Recursive {
				return filepath.SkipDir
			}
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
			files = append(files, p)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// document is one YAML document and the line it starts on.
type document struct {
	data []byte
	line int
}

// splitDocuments splits on lines that start a new document ("---").
func splitDocuments(data []byte) []document {
	var docs []document
	var cur bytes.Buffer
	start := 1
	lineNo := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if isSeparator(line) {
			docs = append(docs, document{data: append([]byte(nil), cur.Bytes()...), line: start})
			cur.Reset()
			start = lineNo + 1
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
	}
	docs = append(docs, document{data: cur.Bytes(), line: start})
	return docs
}

func isSeparator(line string) bool {
	if !strings.HasPrefix(line, "---") {
		return false
	}
	rest := strings.TrimSpace(line[3:])
	return rest == "" || strings.HasPrefix(rest, "#")
}

// isBlank reports a document with only comments and white space.
func isBlank(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		t := strings.TrimSpace(line)
		if t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}

var yamlLineRE = regexp.MustCompile(`line (\d+)`)

// SyntaxError is a YAML or JSON error at a line of a file.
type SyntaxError struct {
	Source string
	Line   int
	Msg    string
}

func (e *SyntaxError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Source, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Source, e.Msg)
}

// Parse returns the objects of data, read from source.
func Parse(source string, data []byte) ([]*Object, error) {
	var out []*Object
	for _, doc := range splitDocuments(data) {
		if isBlank(doc.data) {
			continue
		}
		objs, err := parseDocument(source, doc)
		if err != nil {
			return nil, err
		}
		out = append(out, objs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no objects", source)
	}
	return out, nil
}

func parseDocument(source string, doc document) ([]*Object, error) {
	jsonData, err := yaml.YAMLToJSON(doc.data)
	if err != nil {
		return nil, yamlError(source, doc, err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(jsonData, &m); err != nil || m == nil {
		return nil, &SyntaxError{Source: source, Line: doc.line, Msg: "the document is not a mapping (an object with apiVersion, kind and metadata)"}
	}
	u := &unstructured.Unstructured{Object: m}
	if u.IsList() {
		return listItems(source, doc.line, u)
	}
	obj := &Object{Unstructured: u, Source: source, Line: doc.line}
	if err := validateObject(obj); err != nil {
		return nil, err
	}
	return []*Object{obj}, nil
}

func listItems(source string, line int, u *unstructured.Unstructured) ([]*Object, error) {
	list, err := u.ToList()
	if err != nil {
		return nil, &SyntaxError{Source: source, Line: line, Msg: err.Error()}
	}
	var out []*Object
	for i := range list.Items {
		obj := &Object{Unstructured: &list.Items[i], Source: source, Line: line}
		if err := validateObject(obj); err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

func validateObject(o *Object) error {
	switch {
	case o.GetAPIVersion() == "":
		return &SyntaxError{Source: o.Source, Line: o.Line, Msg: "apiVersion not set (e.g. apiVersion: apps/v1)"}
	case o.GetKind() == "":
		return &SyntaxError{Source: o.Source, Line: o.Line, Msg: "kind not set (e.g. kind: Deployment)"}
	case o.GetName() == "" && o.GetGenerateName() == "":
		return &SyntaxError{Source: o.Source, Line: o.Line, Msg: fmt.Sprintf("%s has no metadata.name", o.GetKind())}
	}
	return nil
}

// yamlError rewrites "yaml: line 3: ..." to the line of the whole file.
func yamlError(source string, doc document, err error) error {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "error converting YAML to JSON: ")
	msg = strings.TrimPrefix(msg, "yaml: ")
	line := doc.line
	if m := yamlLineRE.FindStringSubmatchIndex(msg); m != nil {
		n, _ := strconv.Atoi(msg[m[2]:m[3]])
		line = doc.line + n - 1
		msg = strings.TrimPrefix(msg[:m[0]]+msg[m[1]:], ": ")
		msg = strings.TrimSpace(strings.TrimPrefix(msg, ":"))
		lines := strings.Split(string(doc.data), "\n")
		if n >= 1 && n <= len(lines) && strings.Contains(leadingSpace(lines[n-1]), "\t") {
			msg += " (a tab indents this line: YAML needs spaces)"
		}
	}
	return &SyntaxError{Source: source, Line: line, Msg: msg}
}

func leadingSpace(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}
