# Unity builds (SLUICE_UNITY) compile a target's sources in batches, so two
# sources of one target that define the same file-local name (in an
# anonymous namespace, or a macro) cannot share a batch. Such sources are
# compiled on their own; the list is kept short by giving file-local names
# that are specific to their file. A new clash shows up as a "redefinition"
# error in the unity build: rename, or add the later file here.
set(SLUICE_UNITY_SOLO
    apps/simkv_main.cc
    bench/datapath_bench_mysql.cc
    bench/puller_bench.cc
    bench/puller_scale_bench.cc
    bench/simkv_bench.cc
    src/checker/mysql_reader.cc
    src/checker/storage_state.cc
    src/codec/model/table_info_test.cc
    src/config/toml_decode.cc
    src/dispatcher/table_trigger_dispatcher_test.cc
    src/dispatchermanager/dispatcher_orchestrator_test.cc
    src/eventservice/event_service_txn_test.cc
    src/eventstore/key_format.cc
    src/eventstore/store_gc.cc
    src/kvclient/snapshot_reader_test.cc
    src/logpuller/matcher_test.cc
    src/logpuller/range_lock_test.cc
    src/logpuller/scan_yield_test.cc
    src/logpuller/span_pipeline_test.cc
    src/logpuller/subscription_client_test.cc
    src/meta/meta_client_test.cc
    src/pd/region_cache_test.cc
    src/schemastore/schema_store_test.cc
    src/node/wire.cc
    src/node/wire_test.cc
    src/simkv/cdc_errors_test.cc
    src/simkv/cdc_resolved_ts_test.cc
    src/simkv/cdc_scan_test.cc
    src/simkv/cdc_stream_test.cc
    src/simkv/fault_spec.cc
    src/simkv/kv_service.cc
    src/simkv/kv_service_test.cc
    src/simkv/mvcc_concurrency_test.cc
    src/simkv/mvcc_store_test.cc
    src/simkv/pd_service_test.cc
    src/simkv/store_registry.cc
    src/simkv/txn_executor.cc
    src/simkv/workload_ddl.cc
    src/simkv/workload_test.cc
    src/sink/codec/csv_test.cc
    src/sink/mysql/dml_builder.cc
    src/sink/mysql/dml_builder_test.cc
    src/sink/mysql/mysql_sink_ddl_test.cc
    src/sink/mysql/mysql_sink_test.cc
    src/sink/mysql/sql_text_test.cc
    src/sink/storage/storage_sink_test.cc
    tests/datapath_scenario_test.cc
    tests/puller_eventstore_test.cc
    tests/puller_scenario_test.cc
    tests/server_e2e_test.cc
)

# Marks the sources of a target being defined (in its own folder's scope,
# where source properties live) that are listed above.
function(sluice_unity_solo)
  foreach(src IN LISTS ARGN)
    get_filename_component(abs ${src} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
    file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${abs})
    if(rel IN_LIST SLUICE_UNITY_SOLO)
      set_source_files_properties(${src} PROPERTIES SKIP_UNITY_BUILD_INCLUSION ON)
    endif()
  endforeach()
endfunction()
