-- A table rebuilt on every run (dbt's `table` materialisation).
select r.name as region, c.year, c.people
from {{ ref('census') }} c
join {{ ref('regions') }} r using (region)
