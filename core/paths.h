#pragma once
// Where Kotae keeps its data: --data DIR, else $KOTAE_DATA, else $XDG_DATA_HOME/kotae, else
// ~/.local/share/kotae. Models live in DATA/models/NAME (see ARCHITECTURE.md); a data folder without
// models of its own uses those the Debian package installed (/usr/share/kotae/models).

#include <filesystem>
#include <string>

namespace kotae {

std::filesystem::path default_data_dir();
std::filesystem::path models_dir(const std::filesystem::path& data_dir);

inline constexpr const char* kPackagedModelsDir = "/usr/share/kotae/models";

// The embedding model used when none is named.
inline constexpr const char* kDefaultEmbeddingModel = "all-minilm-l6-v2";

}  // namespace kotae
