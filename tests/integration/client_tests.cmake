# libstrata end to end (client_*_test.cc): strata::client against real strata-node
# processes with their UCX data plane, over TCP and shared memory. Included from this
# folder's CMakeLists.txt, after strata::testing_node (tests/testing) exists.
if(TARGET strata::client AND TARGET strata::testing_node)
  add_library(strata_client_e2e_support STATIC ${CMAKE_CURRENT_LIST_DIR}/client_e2e_support.cc)
  target_include_directories(strata_client_e2e_support PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(strata_client_e2e_support
    PUBLIC strata::testing_node strata::client strata::reference_model strata::gpu absl::statusor
    PRIVATE glog::glog)
  strata_target_defaults(strata_client_e2e_support)

  # client_recovery_test has its own main(): it runs itself again as a child reader.
  foreach(name client_roundtrip_test client_concurrency_test client_failure_test
               client_recovery_test client_device_test)
    strata_add_test(NAME integration_${name} SOURCES ${CMAKE_CURRENT_LIST_DIR}/${name}.cc
                    LIBS strata_client_e2e_support absl::strings absl::synchronization
                         glog::glog
                    LABELS integration)
  endforeach()
  # The MoE reference worker (client/tools/moe_demo.h) through device memory.
  if(TARGET strata_moe_demo)
    strata_add_test(NAME integration_moe_demo_test
                    SOURCES ${CMAKE_CURRENT_LIST_DIR}/moe_demo_test.cc
                    LIBS strata_client_e2e_support strata_moe_demo glog::glog
                    LABELS integration)
  endif()
  # Many nodes as one store (strata/cluster_client.h), with the CLI: static membership and
  # etcd's (cluster_client_test); joins, drains, etcd killed, restarts, hot replicas
  # (cluster_handover_test).
  foreach(name cluster_client cluster_handover)
    strata_add_test(NAME integration_${name}_test
                    SOURCES ${CMAKE_CURRENT_LIST_DIR}/${name}_test.cc
                    LIBS strata_client_e2e_support strata::testing absl::time absl::strings
                         nlohmann_json::nlohmann_json
                    LABELS integration etcd
                    DEFINITIONS STRATA_CLI_BINARY="$<TARGET_FILE:strata>"
                                STRATA_WORKER_BINARY="$<TARGET_FILE:strata-worker>"
                    DEPENDS strata strata-node strata-worker)
  endforeach()
  # A node cut off in a network namespace the test makes (skipped where it may not).
  strata_add_test(NAME integration_cluster_partition_test
                  SOURCES ${CMAKE_CURRENT_LIST_DIR}/cluster_partition_test.cc
                  LIBS strata_client_e2e_support strata::testing absl::time absl::strings
                  LABELS integration)
  # In-process node with an HBM tier on the host device (shared within the process only).
  strata_add_test(NAME integration_client_hbm_test
                  SOURCES ${CMAKE_CURRENT_LIST_DIR}/client_hbm_test.cc
                  LIBS strata_client_e2e_support strata::node_server strata::store_http strata::store_core
                       strata::tiering strata::gpu
                  LABELS integration)
  # In-process node (to corrupt arena bytes behind its back).
  strata_add_test(NAME integration_client_data_loss_test
                  SOURCES ${CMAKE_CURRENT_LIST_DIR}/client_data_loss_test.cc
                  LIBS strata_client_e2e_support strata::node_server strata::store_core
                       strata::tiering
                  LABELS integration)
endif()

# Rebuild from text end to end: the reference rebuild worker (client/tools) in-process and
# as the strata-worker program against a real node.
if(TARGET strata::client AND TARGET strata::testing_node AND TARGET strata::rebuild_worker
   AND TARGET strata-worker)
  strata_add_test(NAME integration_rebuild_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/rebuild_test.cc
                  LIBS strata_client_e2e_support strata::rebuild_worker absl::strings
                  LABELS integration
                  DEFINITIONS STRATA_WORKER_BINARY="$<TARGET_FILE:strata-worker>"
                  DEPENDS strata-worker)
endif()
