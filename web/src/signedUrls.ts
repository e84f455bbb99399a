import { useEffect, useState } from 'preact/hooks';
import { api } from './api/client';

/**
 * A fresh signed URL for each of a thread's counterpart files (the summary card's photos
 * and documents, a pairing card's cover photo); 404 = deleted or not shared, left out, not retried.
 */
export function useSignedUrls(threadId: string, ids: string[]): Record<string, string> {
  const [urls, setUrls] = useState<Record<string, string>>({});
  const key = ids.join(',');
  useEffect(() => {
    let gone = false;
    void Promise.all(
      ids.map(async (attachmentId) => {
        const res = await api.GET('/api/v1/threads/{threadId}/counterpart-attachments/{attachmentId}/url', {
          params: { path: { threadId, attachmentId } },
        });
        return [attachmentId, res.data?.url] as const;
      }),
    ).then((pairs) => {
      if (!gone) setUrls(Object.fromEntries(pairs.filter((p): p is readonly [string, string] => !!p[1])));
    });
    return () => {
      gone = true;
    };
  }, [threadId, key]);
  return urls;
}
