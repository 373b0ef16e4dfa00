// Package gqlpost is the GraphQL client of the load programs under bench/.
package gqlpost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// Post sends query with vars to base's /graphql, with token as the bearer,
// and decodes the answer's data into v (unless v is nil); an answer other
// than 200, or one with errors, is an error that quotes it.
func Post(client *http.Client, base, token, query string, vars map[string]any, v any) error {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, base+"/graphql", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var r struct {
		Data   json.RawMessage
		Errors []any
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Errors) > 0 || res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d %s", query, res.StatusCode, raw)
	}
	if v != nil {
		return json.Unmarshal(r.Data, v)
	}
	return nil
}
