-- Incremental: each run appends the census years it has not seen yet.
{{ config(materialized='incremental', unique_key=['year', 'region']) }}
select year, region, people, current_date as loaded_on
from {{ ref('census') }}
{% if is_incremental() %}
where year > (select coalesce(max(year), 0) from {{ this }})
{% endif %}
