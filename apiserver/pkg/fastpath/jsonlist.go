package fastpath

import "bytes"

// JSONList is the JSON encoding of a list whose items' encodings are
// items, joined into empty: the serializer's encoding of the same list
// (same kind, same metadata) with no items, written with "items":[] as its
// last field. The bytes are those the serializer writes for the whole list
// (TestJSONListIsTheSerializers), so a list served from the watch cache
// need not encode again the objects it encoded for an earlier list. It
// reports false when empty does not end with its items.
func JSONList(empty []byte, items [][]byte) ([]byte, bool) {
	const itemsField = `"items":[]}`
	end := bytes.LastIndex(empty, []byte(itemsField))
	if end < 0 || len(bytes.TrimSpace(empty[end+len(itemsField):])) != 0 {
		return nil, false
	}
	cut := end + len(`"items":[`)
	head, tail := empty[:cut], empty[cut:]
	size := len(head) + len(tail) + len(items)
	for _, it := range items {
		size += len(it)
	}
	body := make([]byte, 0, size)
	body = append(body, head...)
	for i, it := range items {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, it...)
	}
	return append(body, tail...), true
}
