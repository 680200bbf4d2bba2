"""A dlt pipeline loading into the working catalog that `fdl run` checked out:

    fdl run ROOT -m "stations" -- python examples/dlt/pipeline.py

dlt's `ducklake` destination attaches the SQLite catalog at
$FDL_CATALOG_URL with its data in $FDL_DATA_PATH (the working catalog's
own folder in the repository; the commit publishes the files), loading
DuckDB's extensions from $FDL_EXTENSION_DIR, so nothing is downloaded. A second run merges on `id`: changed rows are updated in place.
dlt's bookkeeping tables (`_dlt_loads`, `_dlt_version`,
`_dlt_pipeline_state`) land in the same schema and stay in the catalog; the
description (dataset.yml, put into the working catalog on the first run,
carried over after) leaves them out with `annotations.fdl.exclude`.
"""
import json
import os
import pathlib
import shutil
import sys

import dlt
from dlt.destinations.impl.ducklake.configuration import DuckLakeCredentials

ROWS = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else pathlib.Path(__file__).with_name("stations.json")


@dlt.resource(name="stations", write_disposition="merge", primary_key="id")
def stations():
    yield json.loads(ROWS.read_text())


def main():
    description = pathlib.Path(os.environ["FDL_WORK"]) / "dataset.yml"
    if not description.exists():  # the first version; later ones carry it over
        shutil.copyfile(pathlib.Path(__file__).with_name("dataset.yml"), description)
    credentials = DuckLakeCredentials(
        "lake",
        catalog=os.environ["FDL_CATALOG_URL"],
        storage=os.environ["FDL_DATA_PATH"],
    )
    credentials.global_config = {"extension_directory": os.environ["FDL_EXTENSION_DIR"],
                                 "autoinstall_known_extensions": False}
    pipeline = dlt.pipeline(
        pipeline_name="stations",
        destination=dlt.destinations.ducklake(credentials=credentials),
        dataset_name="weather",
        pipelines_dir=os.path.join(os.environ["FDL_WORK"], ".dlt"),
    )
    info = pipeline.run(stations())
    print(info)


if __name__ == "__main__":
    main()
