# The bodies a provider plugin encodes from the kit's corpus (`nucleo plugin check
# --save-requests`) against the provider's published schema, by ../shared/tools/validate_wire.py
# when that checkout is present beside the project (the kit itself runs without it: abi.125).
# Run with -DNUCLEO=<nucleo> -DPLUGIN=<file.so> -DFAMILY=<anthropic|openai|bedrock>
#          -DWORK=<folder> -DVALIDATOR=<validate_wire.py>.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
execute_process(COMMAND "${NUCLEO}" plugin check "${PLUGIN}" --save-requests "${WORK}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the kit failed on ${PLUGIN} (${rc}):\n${out}${err}")
endif()
file(GLOB bodies "${WORK}/*.json")
list(LENGTH bodies count)
if(count LESS 20)
  message(FATAL_ERROR "the kit saved ${count} request bodies of ${PLUGIN}, expected the corpus")
endif()
if(NOT EXISTS "${VALIDATOR}")
  message(STATUS "${VALIDATOR} is absent: ${count} bodies not validated against the published schema")
  return()
endif()
execute_process(COMMAND python3 "${VALIDATOR}" "${FAMILY}" ${bodies}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bodies of ${PLUGIN} off the published ${FAMILY} schema:\n${out}${err}")
endif()
