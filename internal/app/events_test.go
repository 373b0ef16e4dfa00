package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/configurator/catalogue/ent"
	"github.com/configurator/catalogue/ent/event"
	"github.com/configurator/catalogue/internal/app"
	"github.com/configurator/catalogue/internal/database"
	"github.com/configurator/catalogue/internal/dbtest"
	"github.com/configurator/catalogue/internal/events"
	"github.com/configurator/catalogue/internal/share"
)

// failing is a notifier that fails, so that the write it belongs to
// rolls back after its event was recorded.
type failing struct{}

func (failing) Notify(context.Context, *database.Tx, events.Event) error {
	return errors.New("the notification failed")
}

// TestEventsCommitWithTheWrite: every write records its event in its own
// transaction: the event and the write are stored together, or, when
// anything in the transaction fails after the event was recorded,
// neither is. A deletion's data is its id; others carry the record.
func TestEventsCommitWithTheWrite(t *testing.T) {
	dbtest.Run(t, func(t *testing.T, c *ent.Client) {
		sys := dbtest.Sys
		o, other := dbtest.NewTenant(t, c, "A"), dbtest.NewTenant(t, c, "B")
		ctx := o.Dash(1)
		hub := events.NewHub(nil)
		heard, stop := hub.Subscribe(o.ID, nil)
		defer stop()
		others, stopOthers := hub.Subscribe(other.ID, nil)
		defer stopOthers()

		a := app.New(c, nil, share.New(""))
		a.SetEvents(app.Events{Notify: failing{}})
		if _, err := a.CreateMaterial(ctx, app.CreateMaterial{Input: ent.CreateMaterialInput{Name: "Lost"}}); err == nil {
			t.Fatal("a write whose notification failed succeeded")
		}
		if n := c.Material.Query().CountX(sys); n != 0 {
			t.Errorf("%d materials after the rolled-back write; want 0", n)
		}
		if n := c.Event.Query().CountX(sys); n != 0 {
			t.Errorf("%d events after the rolled-back write; want 0", n)
		}

		a.SetEvents(app.Events{Notify: events.Local{Hub: hub}})
		id, err := a.CreateMaterial(ctx, app.CreateMaterial{Input: ent.CreateMaterialInput{Name: "Kept"}})
		if err != nil {
			t.Fatal(err)
		}
		name := "Renamed"
		if err := a.UpdateMaterial(ctx, app.UpdateMaterial{ID: id, Input: ent.UpdateMaterialInput{Name: &name}}); err != nil {
			t.Fatal(err)
		}
		if err := a.DeleteMaterial(ctx, app.DeleteMaterial{ID: id}); err != nil {
			t.Fatal(err)
		}
		evs := c.Event.Query().Order(event.ByID()).AllX(sys)
		want := []string{events.MaterialCreated, events.MaterialUpdated, events.MaterialDeleted}
		if len(evs) != len(want) {
			t.Fatalf("%d events; want %d", len(evs), len(want))
		}
		for i, ev := range evs {
			var p struct {
				Type string
				Data map[string]any
			}
			if err := json.Unmarshal(ev.Payload, &p); err != nil || ev.Type != want[i] || p.Type != want[i] || ev.OwnerID != o.ID || ev.ResourceID != id {
				t.Errorf("event %d: %s %s owner %d; want %s of owner %d", i, ev.Type, ev.Payload, ev.OwnerID, want[i], o.ID)
			}
			if i == 2 && len(p.Data) != 1 {
				t.Errorf("deletion data %v; want only the id", p.Data)
			}
			if i == 1 && p.Data["name"] != "Renamed" {
				t.Errorf("update data %v; want the material as it is now", p.Data)
			}
			select {
			case e := <-heard:
				if e.Type != want[i] || e.ID != ev.ID {
					t.Errorf("subscriber heard %+v; want event %d %s", e, ev.ID, want[i])
				}
			default:
				t.Errorf("the subscriber did not hear %s", want[i])
			}
		}
		if len(others) != 0 {
			t.Errorf("another owner's subscriber heard %d events", len(others))
		}
	})
}
