# Warnings on for Kotae's own code; third-party headers come in as SYSTEM includes and stay quiet.
function(kotae_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                           $<$<BOOL:${KOTAE_WERROR}>:-Werror>
                                           $<$<BOOL:$<TARGET_PROPERTY:UNITY_BUILD>>:-Wno-subobject-linkage>)
endfunction()

# Sanitizers for the asan preset: KOTAE_SANITIZE=address,undefined
set(KOTAE_SANITIZE "" CACHE STRING "Sanitizers to build with (e.g. address,undefined)")
if(KOTAE_SANITIZE)
  add_compile_options(-fsanitize=${KOTAE_SANITIZE} -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${KOTAE_SANITIZE})
endif()
