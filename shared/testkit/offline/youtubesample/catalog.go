package youtubesample

import "github.com/creatorstrategy/css/shared/research"

// NewCatalog indexes channels (Corpus's, or a test's: e.g. a connected channel's own uploads, newest first)
// as a catalog the Data API's wire server can serve. Each channel's UploadsPlaylistID defaults to "UU" + the id
// without its "UC".
func NewCatalog(channels ...CatalogChannel) *Catalog {
	c := &Catalog{Channels: channels, channel: map[string]*CatalogChannel{}, video: map[string]research.SourceVideo{},
		playlist: map[string]*CatalogChannel{}}
	for i := range c.Channels {
		ch := &c.Channels[i]
		if ch.UploadsPlaylistID == "" && len(ch.ID) > 2 {
			ch.UploadsPlaylistID = "UU" + ch.ID[2:]
		}
		ch.VideoCount = int64(len(ch.Uploads))
		c.channel[ch.ID] = ch
		c.playlist[ch.UploadsPlaylistID] = ch
		for _, v := range ch.Uploads {
			c.video[v.ID] = v
		}
	}
	return c
}
