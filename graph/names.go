package graph

import (
	"strings"
	"unicode"
)

// This file is GraphQL's half of the naming mapping: errors name fields by
// domain path (snake_case, as the data model and REST v1 write them), and
// GraphQL clients read them in the graph's camelCase, spelled exactly as
// entgql spells the generated fields (configurator_id is configuratorID,
// invoice_url is invoiceURL), so one convention holds for generated and
// hand-written names alike. TestFieldNames checks it against entgql for
// every field of the data model.

// initialisms are written in capitals inside a camelCase name; the list is
// ent's (entc/gen).
var initialisms = map[string]bool{
	"ACL": true, "API": true, "ASCII": true, "AWS": true, "CPU": true, "CSS": true, "DNS": true, "EOF": true, "GB": true, "GUID": true,
	"HCL": true, "HTML": true, "HTTP": true, "HTTPS": true, "ID": true, "IP": true, "JSON": true, "KB": true, "LHS": true, "MAC": true,
	"MB": true, "QPS": true, "RAM": true, "RHS": true, "RPC": true, "SLA": true, "SMTP": true, "SQL": true, "SSH": true, "SSO": true,
	"TCP": true, "TLS": true, "TTL": true, "UDP": true, "UI": true, "UID": true, "URI": true, "URL": true, "UTF8": true, "UUID": true,
	"VM": true, "XML": true, "XMPP": true, "XSRF": true, "XSS": true,
}

// comparisons are the suffixes of entgql's where-input predicates
// (nameGT, priceLTE, statusNEQ), written in capitals like initialisms but
// only as the last word, so that a refused filter is named as the client
// wrote it.
var comparisons = map[string]bool{"GT": true, "GTE": true, "LT": true, "LTE": true, "NEQ": true}

// FieldName is the GraphQL spelling of a domain field name: per_page is
// perPage, configurator_id is configuratorID, name_gte is nameGTE.
func FieldName(domain string) string {
	words := strings.Split(domain, "_")
	var b strings.Builder
	for i, w := range words {
		switch {
		case i == 0:
			b.WriteString(strings.ToLower(w))
		case initialisms[strings.ToUpper(w)], i == len(words)-1 && comparisons[strings.ToUpper(w)]:
			b.WriteString(strings.ToUpper(w))
		case w != "":
			b.WriteString(strings.ToUpper(w[:1]) + w[1:])
		}
	}
	return b.String()
}

// DomainName is the domain spelling of a GraphQL field name, the inverse
// of FieldName: perPage is per_page, configuratorID is configurator_id.
func DomainName(name string) string {
	rs := []rune(name)
	var b strings.Builder
	for i, r := range rs {
		if unicode.IsUpper(r) {
			prevLower := i > 0 && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1]))
			acronymEnds := i > 0 && i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsLower(rs[i+1])
			if prevLower || acronymEnds {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}
