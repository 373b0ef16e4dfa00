# The REST paths of workloads W1-W5, as ../shared/bench/compare.sh requests them (wrk.lua fills
# the {c} {id} {p} placeholders): sourced by the bench scripts that drive the same workloads.
L=/api/open-api/v1
rest_path() { case $1 in
  1) echo "$L/materials?per_page=50&page=1&category_id={c}&order_by=created_at&order=desc";;
  2) echo "$L/materials/{id}";;
  3) echo "$L/orders?per_page=20&page=1&configurator_id={c}&start_date=2024-03-01&end_date=2024-06-01&order_by=created_at&order=desc";;
  4) echo "$L/orders?per_page=20&page={p}";;
  5) echo "$L/configurator-option/{id}";; esac; }
