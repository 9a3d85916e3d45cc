import { authorize } from '@recordbase/domain/access-policy';
import { createEndpoint } from '@recordbase/server-kit/http';

/** Every route of records-api, its key's right checked by the domain's access policy. */
export const endpoint = createEndpoint(authorize);
